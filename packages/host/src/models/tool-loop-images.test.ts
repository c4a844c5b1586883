import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { attachModelImage } from '../tools/model-image';
import type { Tool } from '../tools/tool';
import { acceptsImageResults, IMAGE_PART_NOTE, toToolSet, withoutImageParts } from './tool-loop';

/** A screenshot-like result: compact JSON for events and history, pixels only as a model image part. */

const PNG = Buffer.from('89504e470d0a1a0a', 'hex');
const shot = { name: 'shot', description: 'd', inputSchema: { type: 'object', properties: {} }, available: true } as unknown as Tool;
const result = () => attachModelImage({ screenshot: { id: 'f1', name: 's.png', size: 8, sha256: 'x' }, mediaType: 'image/png' }, { data: PNG, mediaType: 'image/png' });

async function roundTrip(imageResults: boolean) {
  const set = await toToolSet([shot], async () => result(), imageResults);
  const tool = set.shot as unknown as { execute: (i: unknown, o: { toolCallId: string }) => Promise<unknown>; toModelOutput: (o: { toolCallId: string; input: unknown; output: unknown }) => unknown };
  const output = await tool.execute({}, { toolCallId: 'c1' });
  return { output, model: tool.toModelOutput({ toolCallId: 'c1', input: {}, output }) };
}

describe('image parts of tool results', () => {
  it('adds the image as an image part when the backend accepts it', async () => {
    const { output, model } = await roundTrip(true);
    expect(JSON.stringify(output)).not.toContain(PNG.toString('base64'));
    expect(model).toEqual({
      type: 'content',
      value: [
        { type: 'text', text: JSON.stringify(output) },
        { type: 'image-data', data: PNG.toString('base64'), mediaType: 'image/png' },
      ],
    });
  });

  it('sends only the compact JSON to other backends', async () => {
    const { output, model } = await roundTrip(false);
    expect(model).toEqual({ type: 'json', value: output });
  });

  it('keeps history free of pixels', () => {
    const messages = [
      {
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'shot', output: { type: 'content', value: [{ type: 'text', text: '{}' }, { type: 'image-data', data: 'AAAA', mediaType: 'image/png' }] } }],
      },
    ] as ModelMessage[];
    const stored = JSON.stringify(withoutImageParts(messages));
    expect(stored).not.toContain('AAAA');
    expect(stored).toContain(IMAGE_PART_NOTE);
  });

  it('knows which providers take images in tool results', () => {
    expect(acceptsImageResults({ provider: 'anthropic.messages' } as never)).toBe(true);
    expect(acceptsImageResults({ provider: 'fengyu-local.chat' } as never)).toBe(false);
    expect(acceptsImageResults({ provider: 'openai.chat' } as never)).toBe(false);
  });
});
