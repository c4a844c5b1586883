/** Installed plugins as the API answers them (the host and the UI share these shapes). */

/** Whether plugin workers run sandboxed here, and by which backend (`none` when they do not). */
export interface SandboxPosture {
  mode: 'sandboxed' | 'unsandboxed';
  backend: string;
}

/** One AI tool of an installed plugin. */
export interface PluginToolView {
  /** `<plugin id>:<tool name>`. */
  id: string;
  name: string;
  description: string;
  effect: string;
  idempotent: boolean;
  timeoutSeconds?: number;
  /** The tool is also offered as a node on the workflow canvas. */
  flowNode: boolean;
}

/** What `GET /api/plugins` shows of one installed plugin. */
export interface PluginView {
  id: string;
  name: string;
  version: string;
  description: string;
  enabled: boolean;
  supportsAi: boolean;
  bundled: boolean;
  tools: PluginToolView[];
  sandbox: SandboxPosture & { network: boolean };
  hooks: { present: boolean; trusted: boolean };
  /** The manifest's translations per UI language: name, description and each tool's description. */
  i18n?: Record<string, { name?: string; description?: string; tools?: Record<string, string> }>;
  installedAt: string;
  updatedAt: string;
}
