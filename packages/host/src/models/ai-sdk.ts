/**
 * The AI SDK and its providers, loaded on the first model call: a host that never calls a model
 * (and every start) reads none of them.
 */
let ai: typeof import('ai') | undefined;

export async function aiSdk(): Promise<typeof import('ai')> {
  ai ??= await import('ai');
  return ai;
}

/** The AI SDK if a model call has loaded it (an error can only come from it once it is loaded). */
export function aiSdkIfLoaded(): typeof import('ai') | undefined {
  return ai;
}
