/**
 * Pure IP address parsing and classification for the SSRF guard. No I/O.
 *
 * `parseIp` accepts every spelling a URL parser, a resolver or `inet_aton` might accept:
 * dotted IPv4 with decimal, octal (`0177`) or hex (`0x7f`) parts, the 1–3 part short forms
 * (`127.1`, `2130706433`, `0x7f000001`), and IPv6 with `::`, an embedded dotted IPv4 tail,
 * brackets and a zone id. `classifyIp` says whether an address is public or why it is not.
 */

export type IpFamily = 4 | 6;

export interface ParsedIp {
  family: IpFamily;
  /** 4 bytes for IPv4, 16 for IPv6. */
  bytes: number[];
}

/** Why an address is refused; `public` means the guard lets it through. */
export type IpClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'shared'
  | 'link-local'
  | 'metadata'
  | 'unspecified'
  | 'multicast'
  | 'broadcast'
  | 'reserved';

const IPV4_PART = /^(0x[0-9a-f]*|0[0-7]*|[1-9][0-9]*)$/i;

function parseIpv4Part(part: string): number | null {
  if (!IPV4_PART.test(part)) return null;
  if (/^0x/i.test(part)) return part.length === 2 ? 0 : Number.parseInt(part.slice(2), 16);
  if (part.length > 1 && part.startsWith('0')) return Number.parseInt(part.slice(1), 8);
  return Number.parseInt(part, 10);
}

/** IPv4 in any `inet_aton` spelling (1–4 parts, each decimal, octal or hex). */
export function parseIpv4(text: string): number[] | null {
  const host = text.endsWith('.') ? text.slice(0, -1) : text;
  const parts = host.split('.');
  if (parts.length < 1 || parts.length > 4 || parts.some((p) => p === '')) return null;
  const nums = parts.map(parseIpv4Part);
  if (nums.some((n) => n === null || !Number.isFinite(n))) return null;
  const values = nums as number[];
  const last = values[values.length - 1] as number;
  const head = values.slice(0, -1);
  if (head.some((n) => n > 255)) return null;
  const lastBytes = 4 - head.length;
  if (last >= 2 ** (8 * lastBytes)) return null;
  const tail: number[] = [];
  for (let i = lastBytes - 1; i >= 0; i--) tail.push(Math.floor(last / 2 ** (8 * i)) % 256);
  return [...head, ...tail];
}

function parseHextets(text: string): number[] | null {
  if (text === '') return [];
  const out: number[] = [];
  for (const group of text.split(':')) {
    if (!/^[0-9a-f]{1,4}$/i.test(group)) return null;
    out.push(Number.parseInt(group, 16));
  }
  return out;
}

/** IPv6 (optionally bracketed, with a zone id and an embedded dotted IPv4 tail). */
export function parseIpv6(text: string): number[] | null {
  let host = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const zone = host.indexOf('%');
  if (zone >= 0) host = host.slice(0, zone);
  if (!host.includes(':')) return null;
  const lastColon = host.lastIndexOf(':');
  const tail = host.slice(lastColon + 1);
  if (tail.includes('.')) {
    // An embedded dotted IPv4 tail (strict decimal): rewrite it as two hextets.
    if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(tail)) return null;
    const q = tail.split('.').map((x) => Number.parseInt(x, 10));
    if (q.some((x) => x > 255)) return null;
    const [a, b, c, d] = q as [number, number, number, number];
    host = `${host.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const want = 8;
  const halves = host.split('::');
  if (halves.length > 2) return null;
  let groups: number[];
  if (halves.length === 2) {
    const left = parseHextets(halves[0] as string);
    const right = parseHextets(halves[1] as string);
    if (!left || !right || left.length + right.length > want - 1) return null;
    groups = [...left, ...new Array(want - left.length - right.length).fill(0), ...right];
  } else {
    const all = parseHextets(host);
    if (!all || all.length !== want) return null;
    groups = all;
  }
  const bytes: number[] = [];
  for (const g of groups) bytes.push(g >> 8, g & 0xff);
  return bytes;
}

/** Parses a host that is an IP literal in any spelling; null for a DNS name. */
export function parseIp(host: string): ParsedIp | null {
  const v6 = host.includes(':') ? parseIpv6(host) : null;
  if (v6) return { family: 6, bytes: v6 };
  const v4 = parseIpv4(host);
  return v4 ? { family: 4, bytes: v4 } : null;
}

function inV4(b: number[], prefix: number[], bits: number): boolean {
  for (let i = 0; i < 4; i++) {
    const keep = Math.max(0, Math.min(8, bits - i * 8));
    const mask = keep === 0 ? 0 : (0xff << (8 - keep)) & 0xff;
    if (((b[i] as number) & mask) !== ((prefix[i] ?? 0) & mask)) return false;
  }
  return true;
}

const V4_TABLE: Array<[number[], number, IpClass]> = [
  [[169, 254, 169, 254], 32, 'metadata'],
  [[255, 255, 255, 255], 32, 'broadcast'],
  [[0], 8, 'unspecified'],
  [[127], 8, 'loopback'],
  [[10], 8, 'private'],
  [[172, 16], 12, 'private'],
  [[192, 168], 16, 'private'],
  [[100, 64], 10, 'shared'],
  [[169, 254], 16, 'link-local'],
  [[192, 0, 0], 24, 'reserved'],
  [[192, 0, 2], 24, 'reserved'],
  [[198, 18], 15, 'reserved'],
  [[198, 51, 100], 24, 'reserved'],
  [[203, 0, 113], 24, 'reserved'],
  [[224], 4, 'multicast'],
  [[240], 4, 'reserved'],
];

export function classifyIpv4(b: number[]): IpClass {
  for (const [prefix, bits, cls] of V4_TABLE) if (inV4(b, prefix, bits)) return cls;
  return 'public';
}

function startsWith(b: number[], prefix: number[]): boolean {
  return prefix.every((v, i) => b[i] === v);
}

export function classifyIpv6(b: number[]): IpClass {
  const zeros10 = b.slice(0, 10).every((x) => x === 0);
  if (zeros10 && b[10] === 0xff && b[11] === 0xff) return classifyIpv4(b.slice(12)); // ::ffff:a.b.c.d
  if (b.every((x) => x === 0)) return 'unspecified';
  if (b.slice(0, 15).every((x) => x === 0) && b[15] === 1) return 'loopback';
  if (zeros10 && b[10] === 0 && b[11] === 0) return classifyIpv4(b.slice(12)); // ::a.b.c.d (compat)
  if (b.slice(0, 8).every((x) => x === 0) && b[8] === 0xff && b[9] === 0xff && b[10] === 0 && b[11] === 0) return classifyIpv4(b.slice(12)); // ::ffff:0:a.b.c.d (IPv4-translated)
  if (startsWith(b, [0, 0x64, 0xff, 0x9b, 0, 1])) return 'reserved'; // local-use NAT64 64:ff9b:1::/48 (may embed any v4)
  if (startsWith(b, [0, 0x64, 0xff, 0x9b])) return classifyIpv4(b.slice(12)); // NAT64 64:ff9b::/96
  if (b[0] === 0x20 && b[1] === 0x02) return classifyIpv4(b.slice(2, 6)); // 6to4 2002::/16
  if (isAwsMetadataV6(b)) return 'metadata';
  if (((b[0] as number) & 0xfe) === 0xfc) return 'private'; // ULA fc00::/7
  if (b[0] === 0xfe && ((b[1] as number) & 0xc0) === 0x80) return 'link-local'; // fe80::/10
  if (b[0] === 0xfe && ((b[1] as number) & 0xc0) === 0xc0) return 'private'; // site-local fec0::/10
  if (b[0] === 0xff) return 'multicast';
  if (startsWith(b, [0x20, 0x01, 0x0d, 0xb8])) return 'reserved'; // documentation
  if (startsWith(b, [0x20, 0x01, 0x00, 0x00])) return 'reserved'; // Teredo (embeds an obfuscated v4)
  if (startsWith(b, [0x01, 0x00, 0, 0, 0, 0, 0, 0])) return 'reserved'; // discard-only 100::/64
  return 'public';
}

/** fd00:ec2::254 (AWS IMDS over IPv6). */
function isAwsMetadataV6(b: number[]): boolean {
  const want = [0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54];
  return want.every((v, i) => b[i] === v);
}

export function classifyIp(ip: ParsedIp): IpClass {
  return ip.family === 4 ? classifyIpv4(ip.bytes) : classifyIpv6(ip.bytes);
}

/** Host names that always point inside the machine or the cloud (checked before DNS). */
const BLOCKED_NAMES = new Set(['localhost', 'metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data']);

/** Classifies a host name that is not an IP literal by its name alone. */
export function classifyHostName(host: string): IpClass {
  const name = host.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) return 'loopback';
  if (BLOCKED_NAMES.has(name)) return 'metadata';
  return 'public';
}

/** Formats parsed bytes in the canonical text form (for messages and for connecting). */
export function formatIp(ip: ParsedIp): string {
  if (ip.family === 4) return ip.bytes.join('.');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((((ip.bytes[i] as number) << 8) | (ip.bytes[i + 1] as number)).toString(16));
  return groups.join(':');
}
