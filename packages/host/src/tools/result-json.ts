/**
 * The JSON text a tool's result object was parsed from, when the host has it (a plugin worker's
 * answer): whoever stores or frames the result uses that text instead of serializing the object
 * again. Set only for a text whose parse is the object (the text is valid JSON of one value and
 * holds no CR, which would break an SSE frame), and only for an object nobody has changed since.
 */
const texts = new WeakMap<object, string>();

export function presetResultJson(value: unknown, text: string): void {
  if (value !== null && typeof value === 'object') texts.set(value, text);
}

/** The text `value` was parsed from, or undefined when it was not parsed here (or is not an object). */
export function resultJsonOf(value: unknown): string | undefined {
  return value !== null && typeof value === 'object' ? texts.get(value) : undefined;
}
