import { readFile, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { createWorker, z } from '@fengyu/plugin-sdk';

/** The example plugin's worker: three typed methods, packed with `fengyu-plugin pack examples/hello-plugin`. */
createWorker()
  .method(
    'greet',
    { description: 'Greets someone by name.', input: z.object({ name: z.string().min(1).describe('Who to greet') }), output: z.object({ text: z.string() }) },
    async ({ name }) => ({ text: `Hello, ${name}!` }),
  )
  .method(
    'count_lines',
    {
      description: 'Counts the lines of a granted text file.',
      input: z.object({ filePath: z.string().meta({ format: 'fengyu-file' }).describe('Resolved path of a granted file') }),
      output: z.object({ lines: z.number().int(), file: z.object({ name: z.string(), bytes: z.number().int() }) }),
    },
    async ({ filePath }, ctx) => {
      ctx.progress({ message: 'reading', current: 0, total: 1 });
      const text = await readFile(filePath, { encoding: 'utf8', signal: ctx.signal });
      const lines = text === '' ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
      return { lines, file: { name: basename(filePath), bytes: Buffer.byteLength(text) } };
    },
  )
  .method(
    'write_note',
    {
      description: 'Writes a text note into a granted folder.',
      input: z.object({ directory: z.string().meta({ format: 'fengyu-directory' }), fileName: z.string().regex(/^[\w.-]+$/), text: z.string() }),
      output: z.object({ path: z.string() }),
    },
    async ({ directory, fileName, text }) => {
      const path = join(directory, fileName);
      await writeFile(path, text);
      return { path };
    },
  )
  .start();
