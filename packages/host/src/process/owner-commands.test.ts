import { describe, expect, it } from 'vitest';
import { ownerProgramSpec } from './owner-commands';

/** Loader variables of an owner's program never reach bubblewrap itself (it runs outside the sandbox). */
describe('ownerProgramSpec', () => {
  const isolation = { primaryOwner: 'default', bwrap: { path: '/usr/bin/bwrap' }, unsandboxedAllowed: async () => false };
  const base = { isolation, home: '/h', hostEnv: { PATH: '/usr/bin', FENGYU_TOKEN: 't', OPENAI_API_KEY: 'k' }, command: 'node', args: ['server.js'], cwd: '/h/runs/x/work', scratch: '/h/runs/x/work', grants: [] };

  it('gives loader variables to the program inside only, other values through the environment', () => {
    const spec = ownerProgramSpec({ ...base, mode: 'sandbox', extraEnv: { LD_PRELOAD: '/h/runs/x/work/evil.so', GCONV_PATH: '/x', API_KEY: 'owner-secret' } });
    expect(spec.command).toBe('/usr/bin/bwrap');
    expect(spec.env.LD_PRELOAD).toBeUndefined();
    expect(spec.env.GCONV_PATH).toBeUndefined();
    expect(spec.env.API_KEY).toBe('owner-secret');
    expect(spec.args.join(' ')).toContain('--setenv LD_PRELOAD /h/runs/x/work/evil.so');
    expect(spec.args.join(' ')).not.toContain('owner-secret');
    expect(spec.env.FENGYU_TOKEN).toBeUndefined();
    expect(spec.env.OPENAI_API_KEY).toBeUndefined();
    expect(spec.args.slice(-3)).toEqual(['--', 'node', 'server.js']);
  });

  it('runs the primary owner\'s program as the host user without the host token', () => {
    const spec = ownerProgramSpec({ ...base, mode: 'host' });
    expect(spec.command).toBe('node');
    expect(spec.env.FENGYU_TOKEN).toBeUndefined();
    expect(spec.env.OPENAI_API_KEY).toBe('k');
  });
});
