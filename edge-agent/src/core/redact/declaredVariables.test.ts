import { describe, expect, it } from 'vitest';
import { declaredVariables } from './declaredVariables.js';

describe('declaredVariables', () => {
  it('reads names, sensitive and the literals of defaults, skipping strings, heredocs and comments', () => {
    const tf = `
# variable "commented" { default = "no" }
variable "db_password" {
  type    = string
  default = "Pa55-default-{x}"  # a brace in a string
  validation {
    condition     = length(var.db_password) > 3
    error_message = "too short } {"
  }
}
variable "token" {
  sensitive = true
  default   = <<EOT
line-one-secret
EOT
}
variable "users" {
  default = {
    alice = { pin = 4711 }
    "bob" = ["b-1", "b-2"]
  }
}
variable "region" {}
resource "x" "y" {
  default = "not a variable"
}
`;
    expect(declaredVariables('main.tf', tf)).toEqual([
      { name: 'db_password', sensitive: false, defaults: ['Pa55-default-{x}'] },
      { name: 'token', sensitive: true, defaults: ['line-one-secret'] },
      { name: 'users', sensitive: false, defaults: ['alice', 'pin', '4711', 'bob', 'b-1', 'b-2'] },
      { name: 'region', sensitive: false, defaults: [] },
    ]);
  });

  it('reads Terraform JSON syntax', () => {
    const json = JSON.stringify({ variable: { a: { default: 'dflt-a' }, b: { sensitive: true } } });
    expect(declaredVariables('vars.tf.json', json)).toEqual([
      { name: 'a', sensitive: false, defaults: ['dflt-a'] },
      { name: 'b', sensitive: true, defaults: [] },
    ]);
  });

  it('stays linear on hostile input', () => {
    const hostile = `${'variable "v" {'.repeat(20_000)}${'"'.repeat(50_000)}`;
    expect(declaredVariables('x.tf', hostile).length).toBeGreaterThan(0);
  });
});
