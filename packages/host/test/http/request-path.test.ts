import { describe, expect, it } from 'vitest';
import { normalizePath } from '../../src/http/request-path';

/**
 * The one path normalization: a path already in canonical form is taken as it is (the common
 * case), and every other spelling goes through decoding, `.`/`..` resolution and re-encoding —
 * both give the same answer for the same path.
 */

describe('normalizePath', () => {
  it('takes a canonical path as it is, its segments split', () => {
    expect(normalizePath('/api/agent/run')).toEqual({ ok: true, path: '/api/agent/run', segments: ['api', 'agent', 'run'] });
    expect(normalizePath('/api/agent/runs/0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b/resume')).toEqual({ ok: true, path: '/api/agent/runs/0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b/resume', segments: ['api', 'agent', 'runs', '0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', 'resume'] });
    expect(normalizePath('/a_b~c-d/e.f..g/x')).toEqual({ ok: true, path: '/a_b~c-d/e.f..g/x', segments: ['a_b~c-d', 'e.f..g', 'x'] });
  });

  it('resolves the spellings that are not canonical to the same path', () => {
    const same = ['/api/agent//run', '/api/./agent/run', '/api/x/../agent/run', '/api/agent/run/', '/%61pi/agent/run', '/api/agent/run/.', '/../api/agent/run'];
    for (const p of same) expect(normalizePath(p), p).toEqual({ ok: true, path: '/api/agent/run', segments: ['api', 'agent', 'run'] });
    expect(normalizePath('/')).toEqual({ ok: true, path: '/', segments: [] });
    expect(normalizePath('/.hidden/x')).toEqual({ ok: true, path: '/.hidden/x', segments: ['.hidden', 'x'] });
    expect(normalizePath("/a%20b/c'd")).toEqual({ ok: true, path: "/a%20b/c'd", segments: ['a b', "c'd"] });
    expect(normalizePath('/API/Agent')).toEqual({ ok: true, path: '/API/Agent', segments: ['API', 'Agent'] });
  });

  it('refuses an encoded slash, a backslash, a control character, a bad escape, a # and a relative path', () => {
    for (const p of ['/api%2fagent', '/api\\agent', '/api/%5cagent', '/api/%00', '/api/\u0001', '/api/%zz', '/api#x', 'api/agent', '', '/api/a b']) expect(normalizePath(p).ok, JSON.stringify(p)).toBe(false);
  });
});
