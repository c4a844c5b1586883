import { errorSpecOf, registerErrors } from '@fengyu/protocol';

/** HTTP / JSON-RPC mapping of the plugins and files domain's error codes (messages: i18n/plugins.ts). */
export const PLUGIN_ERRORS = {
  invalid_manifest: errorSpecOf(400),
  invalid_package: errorSpecOf(400),
  package_too_large: errorSpecOf(413),
  plugin_not_found: errorSpecOf(404),
  plugin_version_not_higher: errorSpecOf(409),
  plugin_disabled: errorSpecOf(409),
  sandbox_unavailable: errorSpecOf(500),
  file_not_found: errorSpecOf(404),
  file_too_large: errorSpecOf(413),
  invalid_files: errorSpecOf(400),
  path_not_granted: errorSpecOf(403),
  unresolved_file_ref: errorSpecOf(400),
};

registerErrors(PLUGIN_ERRORS);
