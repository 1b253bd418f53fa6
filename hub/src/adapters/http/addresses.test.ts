import { describe, expect, it } from 'vitest';
import { AddressSet, isAddressOrCidr } from './addresses.js';

describe('AddressSet', () => {
  it('matches addresses and CIDR blocks of both families, IPv4 clients on dual-stack sockets included', () => {
    const s = new AddressSet(['10.0.0.0/8', '192.168.1.7', 'fd00::/8']);
    expect(s.has('10.200.3.4')).toBe(true);
    expect(s.has('::ffff:10.1.2.3')).toBe(true);
    expect(s.has('192.168.1.7')).toBe(true);
    expect(s.has('192.168.1.8')).toBe(false);
    expect(s.has('fd12::1')).toBe(true);
    expect(s.has('127.0.0.1')).toBe(false);
    expect(s.has(undefined)).toBe(false);
    expect(s.has('not an address')).toBe(false);
  });

  it('tells a valid entry from a bad one', () => {
    expect(['10.0.0.1', '10.0.0.0/24', '::1', 'fd00::/8'].every(isAddressOrCidr)).toBe(true);
    expect(['10.0.0.0/33', 'example.org', '10.0.0.1/8/8', '::/129', ''].some(isAddressOrCidr)).toBe(false);
  });
});
