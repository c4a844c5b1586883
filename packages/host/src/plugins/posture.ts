import type { SandboxPosture } from '@fengyu/protocol';

/** How plugins are isolated right now (recorded on every run). */
export type { SandboxPosture };

/** The posture of a host that has no plugins domain (or no sandbox backend). */
export const UNSANDBOXED: SandboxPosture = { mode: 'unsandboxed', backend: 'none' };
