/**
 * The host package's public entry: assemble a real host in one call (`createHost`), or only its
 * services without HTTP (`composeHost`).
 */
export { type ComposedHost, type ComposeOptions, composeHost } from './compose';
export type { Clock } from './clock';
export type { HostContext } from './context';
export { createHost, type Host, type HostOptions, VERSION } from './http/server';
