import { join } from 'node:path';
import { z } from 'zod';
import { emailError } from './errors';
import { readJsonCached, writeJson } from './json-store';

/** Recipient groups ("tags"): a name and a list of addresses, kept in `<data>/tags.json`. */

export const TagSchema = z.object({
  name: z.string().regex(/^[\p{L}\p{N}][\p{L}\p{N} _.-]{0,63}$/u).describe('Group name, e.g. "North sales"'),
  description: z.string().max(500).optional(),
  recipients: z.array(z.email()).min(1).max(500),
});

export type Tag = z.infer<typeof TagSchema>;

const EMAIL = z.email();
export const isEmail = (s: string) => EMAIL.safeParse(s).success;

export class TagStore {
  constructor(private readonly dataDir: string) {}

  private get file() {
    return join(this.dataDir, 'tags.json');
  }

  async list(): Promise<Tag[]> {
    return readJsonCached<Tag[]>(this.file, []);
  }

  async save(tag: Tag): Promise<Tag> {
    const tags = (await this.list()).filter((t) => t.name !== tag.name);
    tags.push({ ...tag, recipients: [...new Set(tag.recipients.map((r) => r.trim()))] });
    tags.sort((a, b) => a.name.localeCompare(b.name));
    await writeJson(this.file, tags);
    return tags.find((t) => t.name === tag.name) as Tag;
  }

  async remove(name: string): Promise<boolean> {
    const tags = await this.list();
    const kept = tags.filter((t) => t.name !== name);
    await writeJson(this.file, kept);
    return kept.length !== tags.length;
  }

  /**
   * Expands recipients: each entry is an address, a group name, or `tag:<name>`; a string may
   * hold several entries separated by commas or semicolons. Returns unique addresses in order.
   */
  async expand(entries: string | readonly string[]): Promise<string[]> {
    const tags = await this.list();
    const out: string[] = [];
    const list = (typeof entries === 'string' ? [entries] : entries).flatMap((e) => e.split(/[,;]/)).map((e) => e.trim()).filter(Boolean);
    for (const entry of list) {
      const name = entry.startsWith('tag:') ? entry.slice(4).trim() : entry;
      const tag = tags.find((t) => t.name === name) ?? tags.find((t) => t.name.toLowerCase() === name.toLowerCase());
      if (tag) out.push(...tag.recipients);
      else if (!entry.startsWith('tag:') && isEmail(entry)) out.push(entry);
      else if (entry.startsWith('tag:') || !entry.includes('@')) throw emailError('email_tag_not_found', { tag: name, available: tags.map((t) => t.name) });
      else throw emailError('email_bad_recipient', { recipient: entry });
    }
    return [...new Set(out)];
  }
}
