import fc from 'fast-check';
import { isIP } from 'node:net';
import { describe, expect, it } from 'vitest';
import { classifyHostName, classifyIp, formatIp, type IpClass, parseIp } from './ip-address';

/** [host as written, expected class]; every row is one spelling an attacker might try. */
const TABLE: Array<[string, IpClass]> = [
  // loopback in every IPv4 spelling
  ['127.0.0.1', 'loopback'],
  ['127.1', 'loopback'],
  ['127.0.1', 'loopback'],
  ['2130706433', 'loopback'],
  ['0x7f000001', 'loopback'],
  ['0X7F000001', 'loopback'],
  ['017700000001', 'loopback'],
  ['0177.0.0.1', 'loopback'],
  ['0x7f.0.0.1', 'loopback'],
  ['0x7f.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['127.0.0.1.', 'loopback'],
  // private, shared, link-local, metadata
  ['10.0.0.1', 'private'],
  ['012.0.0.1', 'private'],
  ['167772161', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['100.64.0.1', 'shared'],
  ['100.127.255.255', 'shared'],
  ['169.254.1.1', 'link-local'],
  ['169.254.169.254', 'metadata'],
  ['0xa9fea9fe', 'metadata'],
  ['2852039166', 'metadata'],
  ['0251.0376.0251.0376', 'metadata'],
  // unspecified, multicast, broadcast, reserved
  ['0.0.0.0', 'unspecified'],
  ['0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['0x', 'unspecified'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['255.255.255.255', 'broadcast'],
  ['240.0.0.1', 'reserved'],
  ['198.18.0.1', 'reserved'],
  ['192.0.2.1', 'reserved'],
  // public IPv4 next to the boundaries
  ['8.8.8.8', 'public'],
  ['172.15.255.255', 'public'],
  ['172.32.0.0', 'public'],
  ['100.63.255.255', 'public'],
  ['100.128.0.0', 'public'],
  ['169.253.255.255', 'public'],
  ['11.0.0.1', 'public'],
  ['223.255.255.255', 'public'],
  // IPv6
  ['::1', 'loopback'],
  ['[::1]', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback'],
  ['::', 'unspecified'],
  ['[::]', 'unspecified'],
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:0:127.0.0.1', 'loopback'],
  ['::ffff:0:10.1.2.3', 'private'],
  ['::ffff:0:169.254.169.254', 'metadata'],
  ['[::ffff:0:7f00:1]', 'loopback'],
  ['0:0:0:0:ffff:0:c0a8:0101', 'private'],
  ['64:ff9b:1::10.0.0.1', 'reserved'],
  ['[::ffff:7f00:1]', 'loopback'],
  ['::ffff:10.0.0.1', 'private'],
  ['::ffff:169.254.169.254', 'metadata'],
  ['0:0:0:0:0:ffff:a9fe:a9fe', 'metadata'],
  ['::127.0.0.1', 'loopback'],
  ['64:ff9b::7f00:1', 'loopback'],
  ['64:ff9b::8.8.8.8', 'public'],
  ['2002:7f00:1::', 'loopback'],
  ['2002:a00:1::1', 'private'],
  ['fc00::1', 'private'],
  ['fd12:3456::1', 'private'],
  ['fd00:ec2::254', 'metadata'],
  ['[fd00:ec2:0:0:0:0:0:254]', 'metadata'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local'],
  ['febf::1', 'link-local'],
  ['fec0::1', 'private'],
  ['ff02::1', 'multicast'],
  ['2001:db8::1', 'reserved'],
  ['2001::1', 'reserved'],
  ['2606:4700:4700::1111', 'public'],
  ['2a00:1450:4001:80b::200e', 'public'],
];

describe('IP classification', () => {
  it.each(TABLE)('%s is %s', (host, expected) => {
    const ip = parseIp(host);
    expect(ip, `${host} parses as an IP`).not.toBeNull();
    expect(classifyIp(ip!)).toBe(expected);
  });

  it.each(['example.com', 'localhost', '1.2.3.4.5', '256.1.1.1', '1..2', '08.1.1.1', ':::', '1::2::3', '1:2:3:4:5:6:7:8:9', '::1.2.3', '::256.1.1.1', 'g::1', ''])(
    '%s is not an IP literal',
    (host) => {
      expect(parseIp(host)).toBeNull();
    },
  );

  it('classifies dangerous names before DNS', () => {
    expect(classifyHostName('localhost')).toBe('loopback');
    expect(classifyHostName('LOCALHOST.')).toBe('loopback');
    expect(classifyHostName('api.localhost')).toBe('loopback');
    expect(classifyHostName('metadata.google.internal')).toBe('metadata');
    expect(classifyHostName('metadata.google.internal.')).toBe('metadata');
    expect(classifyHostName('example.com')).toBe('public');
  });

  it('parses every canonical IPv4 and IPv6 text back to the same address (property)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV6()), (text) => {
        const ip = parseIp(text);
        expect(ip).not.toBeNull();
        const formatted = formatIp(ip!);
        expect(isIP(formatted)).toBe(ip!.family);
        expect(parseIp(formatted)!.bytes).toEqual(ip!.bytes);
      }),
    );
  });

  it('agrees with the WHATWG URL parser on odd IPv4 spellings (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), fc.constantFrom('dec', 'hex', 'oct'), (n, base) => {
        const text = base === 'dec' ? String(n) : base === 'hex' ? `0x${n.toString(16)}` : `0${n.toString(8)}`;
        const viaUrl = new URL(`http://${text}/`).hostname;
        expect(formatIp(parseIp(text)!)).toBe(viaUrl);
      }),
    );
  });
});
