import { FengYuError, isFengYuError } from '@fengyu/protocol';
import type { LanguageModel, ModelMessage } from 'ai';
import { aiSdk, aiSdkIfLoaded } from './ai-sdk';

/**
 * One streamed model call without tools: returns the whole text, reporting each chunk through
 * `onText`. Provider failures become `model_failed` (the reason never carries the request, so
 * no key can leak); an aborted signal becomes `model_cancelled`.
 */
export interface TextCall {
  model: LanguageModel;
  backendId: string;
  system: string;
  messages: ModelMessage[];
  signal: AbortSignal;
  onText?: (text: string) => void;
  maxRetries?: number;
}

export async function streamModelText(call: TextCall): Promise<string> {
  let text = '';
  try {
    const { streamText } = await aiSdk();
    const result = streamText({
      model: call.model,
      system: call.system,
      messages: call.messages,
      abortSignal: call.signal,
      maxRetries: call.maxRetries ?? 1,
      // failures arrive as `error` parts below; the default handler would print them to stderr
      onError: () => {},
    });
    for await (const part of result.fullStream) {
      if (part.type === 'text-delta') {
        text += part.text;
        if (part.text) call.onText?.(part.text);
      } else if (part.type === 'error') {
        throw part.error;
      } else if (part.type === 'abort') {
        throw new FengYuError('model_cancelled', { backend: call.backendId });
      }
    }
  } catch (err) {
    throw modelError(err, call.backendId, call.signal);
  }
  return text;
}

/** Maps anything a provider throws to a FengYuError with a safe, short reason. */
export function modelError(err: unknown, backendId: string, signal?: AbortSignal): FengYuError {
  if (isFengYuError(err)) return err as FengYuError;
  if (signal?.aborted) return new FengYuError('model_cancelled', { backend: backendId }, undefined, { cause: err });
  return new FengYuError('model_failed', { backend: backendId, reason: safeReason(err) }, undefined, { cause: err });
}

export function safeReason(err: unknown): string {
  if (aiSdkIfLoaded()?.APICallError.isInstance(err)) {
    const status = err.statusCode ? `HTTP ${err.statusCode}: ` : '';
    return `${status}${err.message}`.slice(0, 500);
  }
  if (err instanceof Error) return err.message.slice(0, 500);
  return String(err).slice(0, 500);
}
