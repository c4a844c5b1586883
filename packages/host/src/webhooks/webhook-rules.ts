import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { checkInputs, type DeliveryState, inputChecker, inputContract, type JsonSchema, type Problem, secretInputNames, type TriggerState } from '@fengyu/protocol';
import type { TaskSnapshot, TaskState } from '../tasks/task-submitter';

/**
 * The pure rules of workflow webhooks: secrets and their digests, the loopback peer rule, which
 * inputs a trigger may bind, how a delivery's fields combine with the defaults, the audit
 * lifecycle, pausing under a weakened sandbox, and audit paging cursors.
 */

export const MAX_BODY_BYTES = 256 * 1024;
export const MAX_EVENT_ID_CHARS = 200;
export const MAX_AUDIT_ROWS = 1000;
export const MAX_PAGE = 100;
/** How long an event id is remembered after its claim (a retry inside it never runs twice). */
export const CLAIM_RETENTION_MS = 7 * 24 * 3600 * 1000;
/** How often a running host forgets expired event ids (also once at start). */
export const CLAIM_PRUNE_EVERY_MS = 60 * 1000;
/** Expired claims deleted per statement, each a short hold of the event loop; it turns between two (deliveries go on). */
export const CLAIM_PRUNE_BATCH = 100;
const SECRET_BYTES = 32;
const SECRET_PREFIX = 'fywh_';

export type { DeliveryState, TriggerState };
export const OPEN_STATES: readonly DeliveryState[] = ['CLAIMED', 'QUEUED', 'SUBMITTED'];

export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}

/** A new trigger secret: 256 bits from the CSPRNG, with a recognisable prefix. */
export function newSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64url');
}

/** CSPRNG bytes drawn for ids in blocks (one system call per 512 ids, not one per id). */
const ID_BYTES = 9;
let idPool = Buffer.alloc(0);
let idAt = 0;

/** A new id: the prefix and 72 random bits (ids name things; they authenticate nothing). */
export function newId(prefix: string): string {
  if (idAt + ID_BYTES > idPool.length) {
    idPool = randomBytes(ID_BYTES * 512);
    idAt = 0;
  }
  const bytes = idPool.subarray(idAt, idAt + ID_BYTES);
  idAt += ID_BYTES;
  return prefix + bytes.toString('base64url').replace(/[-_]/g, 'x');
}

/** Width of a delivery id's time part: base-36 milliseconds, zero-padded (enough until the year 5188). */
const DELIVERY_TIME_WIDTH = 9;

/**
 * A new delivery id: `whd_`, the acceptance time (base-36 milliseconds, fixed width, so ids sort
 * by time) and 72 random bits. Ids of later deliveries sort after earlier ones, so the audit's
 * unique id index takes each insert on its newest leaf and the cap's deletes on its oldest, instead
 * of a random leaf each (≈ 0.3 WAL page per delivery). The time shown is the audit's `acceptedAt`.
 */
export function newDeliveryId(acceptedMs: number): string {
  return `whd_${Math.max(0, Math.floor(acceptedMs)).toString(36).padStart(DELIVERY_TIME_WIDTH, '0')}${newId('')}`;
}

/** A stored hex digest as bytes (what `secretMatches` compares). */
export function digestBytes(storedDigestHex: string): Buffer {
  return Buffer.from(storedDigestHex, 'hex');
}

/**
 * Compares a presented secret with a stored digest (hex, or its bytes from `digestBytes`) in
 * constant time (digests of equal length).
 */
export function secretMatches(presented: unknown, storedDigest: string | Buffer): boolean {
  if (typeof presented !== 'string' || presented.length === 0 || presented.length > 512) return false;
  const a = hash('sha256', presented, 'buffer');
  const b = typeof storedDigest === 'string' ? digestBytes(storedDigest) : storedDigest;
  return a.length === b.length && timingSafeEqual(a, b);
}

/** True for a loopback peer address (IPv4 127/8, IPv6 ::1, or IPv4-mapped 127/8). */
export function isLoopbackPeer(address: string | undefined): boolean {
  if (!address) return false;
  const a = address.toLowerCase();
  if (a === '::1') return true;
  const v4 = a.startsWith('::ffff:') ? a.slice(7) : a;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

export type EventIdCheck = { ok: true; eventId?: string } | { ok: false; reason: string };

/** The optional event-id header: absent, or 1..200 characters. */
export function checkEventId(header: string | string[] | undefined): EventIdCheck {
  if (header === undefined) return { ok: true };
  if (Array.isArray(header)) return { ok: false, reason: 'send the header once' };
  if (header.length === 0) return { ok: false, reason: 'it is empty' };
  if (header.length > MAX_EVENT_ID_CHARS) return { ok: false, reason: `it is longer than ${MAX_EVENT_ID_CHARS} characters` };
  return { ok: true, eventId: header };
}

/**
 * Inputs a trigger can never bind: picker-file inputs and automatically created shared
 * directories, whose grants belong to an interactive session that a delivery does not have.
 */
export function unbindableInputs(schema: JsonSchema | undefined): Problem[] {
  const c = inputContract(schema);
  return [
    ...c.files.map((name) => ({ code: 'webhook_input_file', field: name, params: { input: name } })),
    ...c.sharedDirectories.map((name) => ({ code: 'webhook_input_shared_directory', field: name, params: { input: name } })),
  ];
}

/** Names given that the schema does not declare as value inputs (each one a problem). */
function undeclared(schema: JsonSchema | undefined, values: Record<string, unknown>, where: string): Problem[] {
  return undeclaredIn(new Set(inputContract(schema).values), values, where);
}

function undeclaredIn(declared: ReadonlySet<string>, values: Record<string, unknown>, where: string): Problem[] {
  return Object.keys(values)
    .filter((k) => !declared.has(k))
    .map((k) => ({ code: 'webhook_field_undeclared', field: where ? `${where}.${k}` : k, params: { input: k } }));
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Checks a trigger's saved defaults: declared value inputs of the right type (required ones may come later). */
export function defaultsProblems(schema: JsonSchema | undefined, defaults: unknown): Problem[] {
  if (defaults === undefined) return [];
  if (!isPlainObject(defaults)) return [{ code: 'inputs_not_object', field: 'defaults', params: {} }];
  const out = undeclared(schema, defaults, 'defaults');
  if (out.length > 0) return out;
  const relaxed = { ...(schema ?? {}), required: [] };
  const check = checkInputs(relaxed, defaults);
  return check.ok ? [] : check.problems.map((p) => ({ ...p, field: `defaults.${p.field}` }));
}

export type BoundInputs = { ok: true; inputs: Record<string, unknown> } | { ok: false; problems: Problem[] };

/** A delivery's body fields override the defaults; the result must satisfy the input schema. */
export function bindDelivery(schema: JsonSchema | undefined, defaults: Record<string, unknown>, body: unknown): BoundInputs {
  return deliveryBinder(schema).bind(defaults, body);
}

/** The delivery checks of one input schema, prepared once (for a published version, which never changes). */
export interface DeliveryBinder {
  /** The inputs a trigger can never bind (`unbindableInputs`). */
  readonly unbindable: Problem[];
  /** `bindDelivery` against this schema. */
  bind(defaults: Record<string, unknown>, body: unknown): BoundInputs;
  /** The secret inputs (`format: "password"`, `writeOnly`): a value a delivery sends is sealed under its task's id. */
  secret: string[];
}

/** `unbindableInputs` and `bindDelivery` for one schema, its contract and validator made once. */
export function deliveryBinder(schema: JsonSchema | undefined): DeliveryBinder {
  const declared = new Set(inputContract(schema).values);
  const check = inputChecker(schema);
  return {
    unbindable: unbindableInputs(schema),
    secret: secretInputNames(schema),
    bind(defaults, body) {
      // no body at all binds the defaults alone; a JSON `null` is a body, and not an object
      if (body === undefined) body = {};
      if (!isPlainObject(body)) return { ok: false, problems: [{ code: 'webhook_body_not_object', field: '(body)', params: {} }] };
      const extra = undeclaredIn(declared, body, '');
      if (extra.length > 0) return { ok: false, problems: extra };
      const merged = { ...defaults, ...body };
      const checked = check(merged);
      return checked.ok ? { ok: true, inputs: checked.inputs } : { ok: false, problems: checked.problems };
    },
  };
}

const DELIVERY_STATE_OF: Readonly<Record<TaskState, DeliveryState>> = {
  queued: 'QUEUED',
  running: 'SUBMITTED',
  waiting: 'SUBMITTED',
  completed: 'COMPLETED',
  failed: 'FAILED',
  cancelled: 'CANCELLED',
  interrupted: 'INTERRUPTED',
};

/** The audit state that mirrors a task's state. */
export function deliveryStateOf(task: Pick<TaskSnapshot, 'state' | 'queued'>): DeliveryState {
  if (task.state === 'queued' || task.queued) return 'QUEUED';
  return DELIVERY_STATE_OF[task.state];
}

export function isTerminal(state: DeliveryState): boolean {
  return !OPEN_STATES.includes(state);
}

/**
 * A trigger created while plugins ran sandboxed is paused whenever they no longer do, and
 * active again once they do; a disabled trigger stays disabled.
 */
export function effectiveState(stored: 'active' | 'disabled', createdSandboxed: boolean, sandboxedNow: boolean): { state: TriggerState; pausedReason?: 'sandbox_weakened' } {
  if (stored === 'disabled') return { state: 'disabled' };
  if (createdSandboxed && !sandboxedNow) return { state: 'paused', pausedReason: 'sandbox_weakened' };
  return { state: 'active' };
}

/** Audit paging: an opaque cursor naming the last row seen (rows are newest first). */
export function encodeCursor(seq: number): string {
  return Buffer.from(`d${seq}`, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string | undefined): number | undefined | 'invalid' {
  if (cursor === undefined || cursor === '') return undefined;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const m = /^d(\d{1,15})$/.exec(text);
  return m ? Number(m[1]) : 'invalid';
}

/** `Date#toISOString` with the last instant kept: the deliveries of one millisecond share one string. */
export function isoFormatter(): (ms: number) => string {
  let lastMs = Number.NaN;
  let lastText = '';
  return (ms) => {
    if (ms !== lastMs) {
      lastText = new Date(ms).toISOString();
      lastMs = ms;
    }
    return lastText;
  };
}
