import { describeIssue, errorSpec, FengYuError, isFengYuError, type Locale, localize, MESSAGES, pickLocale, type Problem } from '@fengyu/protocol';
import type { ErrorObject } from 'ajv';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';

/** The one mapping from errors to the HTTP envelope `{error:{code,message,details}}`. */

function localizeDetails(details: unknown, locale: Locale): unknown {
  if (!Array.isArray(details)) return details;
  return details.map((d) => {
    if (!d || typeof d !== 'object' || typeof (d as Problem).code !== 'string') return d;
    const p = d as Problem;
    // Outside English, a problem with parameters is rendered from the table in the caller's
    // language even when its producer attached English text; a bare message is passed through.
    const translated = locale !== 'en' && p.params !== undefined && MESSAGES[locale][p.code] !== undefined;
    const message = translated || p.message === undefined ? localize(p.code, p.params ?? {}, locale) : p.message;
    const details2 = (d as { details?: unknown }).details;
    return { ...p, message, ...(details2 ? { details: localizeDetails(details2, locale) } : {}) };
  });
}

export function envelope(err: FengYuError, locale: Locale) {
  return {
    error: {
      code: err.code,
      message: localize(err.code, err.params, locale),
      ...(err.details !== undefined ? { details: localizeDetails(err.details, locale) } : {}),
    },
  };
}

/** Converts Fastify's own errors (validation, body limits, bad JSON) into FengYuErrors. */
export function toFengYuError(err: unknown, bodyLimit?: number): FengYuError {
  if (isFengYuError(err)) return err as FengYuError;
  const fe = err as FastifyError & { validation?: ErrorObject[]; validationContext?: string };
  if (fe.validation) {
    // each problem names its field in a sentence rendered in the caller's language (see localizeDetails)
    const problems = fe.validation.map((v) => {
      const issue = describeIssue(v);
      const field = `${fe.validationContext ?? 'body'}${issue.path === '(root)' ? '' : issue.path}`;
      return { code: 'invalid_request', field, params: { reason: issue.text } };
    });
    return new FengYuError('invalid_request', { reason: problems.map((p) => p.params.reason) }, problems);
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new FengYuError('payload_too_large', { limit: bodyLimit ?? 0 });
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new FengYuError('invalid_json', { reason: fe.message });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new FengYuError('invalid_request', { reason: fe.message });
  }
  if (fe.statusCode === 413) return new FengYuError('payload_too_large', { limit: bodyLimit ?? 0 });
  if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) return new FengYuError('invalid_request', { reason: fe.message });
  if (err instanceof SyntaxError) return new FengYuError('invalid_json', { reason: err.message });
  return new FengYuError('internal', { reason: internalReason(err) }, undefined, { cause: err });
}

/**
 * What an unexpected error may say in an answer. A system error's message names the file it was
 * about (an absolute path under the host's home): only its code and call are shown; the log keeps
 * the whole error.
 */
function internalReason(err: unknown): string {
  const sys = err as { code?: unknown; syscall?: unknown };
  if (err instanceof Error && typeof sys.code === 'string' && typeof sys.syscall === 'string') return `${sys.code} (${sys.syscall})`;
  return err instanceof Error ? err.message : String(err);
}

export function sendError(err: unknown, request: FastifyRequest, reply: FastifyReply) {
  const fe = toFengYuError(err, request.routeOptions?.bodyLimit ?? request.server.initialConfig.bodyLimit);
  const status = errorSpec(fe.code).status;
  if (status >= 500) request.log.error({ err }, 'request failed');
  const locale = pickLocale(request.headers['accept-language']);
  if (fe.code === 'capacity_exhausted') reply.header('Retry-After', String(fe.params.retryAfterSeconds ?? 1));
  return reply.status(status).send(envelope(fe, locale));
}
