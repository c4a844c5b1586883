/** Installed plugins as the API answers them (the host and the UI share these shapes). */

/** Whether plugin workers run sandboxed here, and by which backend (`none` when they do not). */
export interface SandboxPosture {
  /** `sandboxed` when workers run inside the sandbox backend, else `unsandboxed`. */
  mode: 'sandboxed' | 'unsandboxed';
  /** The sandbox backend (`bwrap`), or `none` when workers run unsandboxed. */
  backend: string;
}

/** One AI tool of an installed plugin. */
export interface PluginToolView {
  /** `<plugin id>:<tool name>`. */
  id: string;
  /** The tool's name as the manifest declares it. */
  name: string;
  /** The manifest's description of the tool (shown to the model). */
  description: string;
  /** Its declared effect: `read`, `write` or `external`. */
  effect: string;
  /** True when the manifest declares the tool idempotent (a write or external call may be retried). */
  idempotent: boolean;
  /** Its call timeout in seconds, clamped to [1, 600]; absent: the host's default applies. */
  timeoutSeconds?: number;
  /** The tool is also offered as a node on the workflow canvas. */
  flowNode: boolean;
}

/** What `GET /api/plugins` shows of one installed plugin. */
export interface PluginView {
  /** The plugin's id from its manifest. */
  id: string;
  /** Its display name. */
  name: string;
  /** Its installed version (semver). */
  version: string;
  /** Its description. */
  description: string;
  /** False when the user disabled it: its tools stay listed but refuse calls (`plugin_disabled`). */
  enabled: boolean;
  /** True exactly when it declares AI tools. */
  supportsAi: boolean;
  /** True when the host installed it from the packages it ships with. */
  bundled: boolean;
  /** Its AI tools. */
  tools: PluginToolView[];
  /** The host's sandbox posture, and whether the manifest keeps network access inside the sandbox. */
  sandbox: SandboxPosture & {
    /** True when the manifest keeps network access inside the sandbox. */
    network: boolean;
  };
  /** The plugin's hooks as the asking owner sees them (only trusted hooks run). */
  hooks: {
    /** True when the plugin ships hooks. */
    present: boolean;
    /** True when the asking owner trusts the installed package's hooks (an upgrade asks again). */
    trusted: boolean;
  };
  /** The manifest's translations per UI language: name, description and each tool's description. */
  i18n?: Record<
    string,
    {
      /** The translated name; absent: the manifest's own. */
      name?: string;
      /** The translated description; absent: the manifest's own. */
      description?: string;
      /** Translated tool descriptions by tool name. */
      tools?: Record<string, string>;
    }
  >;
  /** When it was first installed (ISO-8601 UTC). */
  installedAt: string;
  /** When it was last installed or changed (ISO-8601 UTC). */
  updatedAt: string;
}
