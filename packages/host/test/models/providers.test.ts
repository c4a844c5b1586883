import { describe, expect, it } from 'vitest';
import { chat } from '../chat/chat-client';
import { scriptedHost } from '../support/scripted-host';

const { t, llm } = scriptedHost({ host: () => ({ env: { TEST_LLM_KEY_FROM_ENV: 'sk-from-env-456' } }) });

const use = async (backend: Record<string, unknown>) => {
  const res = await t.api('PATCH', '/api/settings', { backends: [{ id: 'b', model: 'scripted', ...backend }], defaultBackend: 'b' });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
};

describe('providers and key sources', () => {
  it('speaks to an OpenAI backend (@ai-sdk/openai .chat()) with a stored key', async () => {
    await use({ provider: 'openai', baseURL: llm.url, apiKey: 'sk-openai-789' });
    llm.push({ text: 'from openai provider' });
    const r = await chat(t, { message: 'hi' });
    expect(r.frames.at(-1)?.data.text).toBe('from openai provider');
    expect(llm.headers.at(-1)?.authorization).toBe('Bearer sk-openai-789');
  });

  it('reads apiKeyEnv from the host environment at call time', async () => {
    await use({ provider: 'openai-compatible', baseURL: llm.url, apiKeyEnv: 'TEST_LLM_KEY_FROM_ENV' });
    llm.push({ text: 'env key' });
    const r = await chat(t, { message: 'hi' });
    expect(r.frames.at(-1)?.event).toBe('done');
    expect(llm.headers.at(-1)?.authorization).toBe('Bearer sk-from-env-456');
    const settings = await t.api('GET', '/api/settings');
    expect(JSON.stringify(settings.body)).not.toContain('sk-from-env-456');
  });

  it('refuses a keyless anthropic/openai backend with a clear 400', async () => {
    await use({ provider: 'anthropic', apiKeyEnv: 'NOT_SET_ANYWHERE' });
    const r = await chat(t, { message: 'hi' });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('backend_key_missing');
    expect(r.body.error.message).toContain('NOT_SET_ANYWHERE');
  });

  it('config.model overrides the backend model', async () => {
    await use({ provider: 'openai-compatible', baseURL: llm.url });
    llm.push({ text: 'ok' });
    await chat(t, { message: 'hi', model: 'other-model' });
    expect(llm.requests.at(-1)?.model).toBe('other-model');
  });
});
