/** How plugins are isolated right now (recorded on every run). */
export interface SandboxPosture {
  mode: 'sandboxed' | 'unsandboxed';
  backend: string;
}

/** The posture of a host that has no plugins domain (or no sandbox backend). */
export const UNSANDBOXED: SandboxPosture = { mode: 'unsandboxed', backend: 'none' };
