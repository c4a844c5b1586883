/**
 * A value typed beside a live picker (e.g. recipients: a saved group, or addresses). Text with an
 * `@` is read as e-mail addresses separated by commas or semicolons, and every one must be a
 * valid address; other text is taken as typed (a name the picker's tool knows).
 */

const ADDRESS = /^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+\.[^\s@<>(),;:"]+$/;

export type TypedChoice = { ok: true; value: string } | { ok: false; invalid: string[] };

export function readTypedChoice(text: string): TypedChoice {
  const trimmed = text.trim();
  if (!trimmed.includes('@')) return { ok: true, value: trimmed };
  const parts = trimmed
    .split(/[,;]/)
    .map((p) => p.trim())
    .filter(Boolean);
  const invalid = parts.filter((p) => !ADDRESS.test(p));
  return invalid.length > 0 ? { ok: false, invalid } : { ok: true, value: parts.join(', ') };
}
