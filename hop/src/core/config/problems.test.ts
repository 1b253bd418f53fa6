import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { checkConfig } from './problems.js';

const Address = z.strictObject({
  host: z.string().default('127.0.0.1'),
  port: z.number().int().min(0).max(65535).default(8080),
});
const Schema = z.strictObject({
  listen: z.union([Address, z.strictObject({ hop: Address, api: Address })]).default({
    host: '127.0.0.1',
    port: 8080,
  }),
  kind: z.enum(['sqlite', 'postgres']).default('sqlite'),
  secret: z.string().min(16).optional(),
  upstreams: z.array(z.strictObject({ url: z.url(), tokenFile: z.string() })).default([]),
  site: z.string().optional(),
});

const problems = (raw: unknown) => {
  const r = checkConfig(Schema, raw);
  return r.ok ? [] : r.problems;
};

describe('checkConfig', () => {
  it('names a misspelled key inside the second form of a union with its full path and the near key', () => {
    expect(problems({ listen: { hop: { prot: 1 }, api: {} } })).toEqual([
      'listen.hop.prot: unknown key; did you mean listen.hop.port?',
    ]);
  });

  it('names a wrong type by its full path, the expected type and the value found', () => {
    expect(problems({ listen: { hop: {}, api: { port: '8080x' } } })).toEqual([
      'listen.api.port: expected a number, found "8080x"',
    ]);
  });

  it('reports a misspelled key of the first form of a union against that form', () => {
    expect(problems({ listen: { host: 'x', prot: 1 } })).toEqual([
      'listen.prot: unknown key; did you mean listen.port?',
    ]);
  });

  it('names the forms a union takes when the value fits none', () => {
    expect(problems({ listen: 5 })).toEqual(['listen: expected { host, port } or { hop, api }, found 5']);
  });

  it('spells list indexes in brackets and lists the known keys when none is near', () => {
    expect(problems({ upstreams: [{ url: 'http://h', tokenFile: 't', zzzzzz: 1 }] })).toEqual([
      'upstreams[0].zzzzzz: unknown key; expected one of url, tokenFile',
    ]);
    expect(problems({ upstreams: [{ url: 'nope' }] })).toEqual([
      'upstreams[0].url: expected a valid url, found "nope"',
      'upstreams[0].tokenFile: required: expected a string, found nothing',
    ]);
  });

  it('lists the allowed values of an enum and the bounds of a number', () => {
    expect(problems({ kind: 'mysql', listen: { port: 70000 } })).toEqual([
      'listen.port: expected a number ≤ 65535, found 70000',
      'kind: expected one of "sqlite", "postgres", found "mysql"',
    ]);
  });

  it('never repeats the value of a secret, nor a password in a URL', () => {
    expect(problems({ secret: 'hunter2' })).toEqual([
      'secret: expected a string of at least 16 characters, found a 7-character string (not shown)',
    ]);
    expect(problems({ kind: 'mysql://ada:hunter2@db:3306/x' })).toEqual([
      'kind: expected one of "sqlite", "postgres", found "mysql://ada:***@db:3306/x"',
    ]);
  });

  it('suggests a top-level key and spells the top level one way', () => {
    expect(problems({ stie: 'a' })).toEqual(['stie: unknown key; did you mean site?']);
    expect(problems([1])).toEqual(['(top level): expected an object, found [1]']);
  });
});
