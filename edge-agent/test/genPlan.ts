/**
 * A synthetic plan of `n` resources (format 1.2) for the 10,000-resource test and the benchmark:
 * a mix of creates, updates, replaces, deletes and no-ops across modules and for_each keys, each with
 * a sensitive attribute, plus drift on every 50th resource.
 */
export function generatePlan(n: number): Record<string, unknown> {
  const changes: unknown[] = [];
  const drift: unknown[] = [];
  const kinds = [['create'], ['update'], ['delete', 'create'], ['delete'], ['no-op']] as const;
  for (let i = 0; i < n; i++) {
    const actions = kinds[i % kinds.length] as readonly string[];
    const mod = `module.site_${i % 20}`;
    const address = `${mod}.aws_instance.node["n${i}"]`;
    const before =
      actions[0] === 'create'
        ? null
        : { ami: `ami-${i}`, tags: { env: 'edge', idx: `${i}` }, password: `pw-${i}-secret` };
    const after =
      actions.length === 1 && actions[0] === 'delete'
        ? null
        : { ami: `ami-${i + 1}`, tags: { env: 'edge', idx: `${i}`, new: 'x' }, password: `pw-${i}-secret2` };
    changes.push({
      address,
      module_address: mod,
      mode: 'managed',
      type: 'aws_instance',
      name: 'node',
      index: `n${i}`,
      provider_name: 'registry.terraform.io/hashicorp/aws',
      change: {
        actions,
        before,
        after,
        after_unknown: {},
        before_sensitive: { password: true, tags: {} },
        after_sensitive: { password: true, tags: {} },
      },
    });
    if (i % 50 === 0) {
      drift.push({
        address,
        module_address: mod,
        mode: 'managed',
        type: 'aws_instance',
        name: 'node',
        index: `n${i}`,
        provider_name: 'registry.terraform.io/hashicorp/aws',
        change: {
          actions: ['update'],
          before: { tags: { env: 'edge' } },
          after: { tags: { env: 'hand-edited' } },
          after_unknown: {},
          before_sensitive: {},
          after_sensitive: {},
        },
      });
    }
  }
  return {
    format_version: '1.2',
    terraform_version: '1.6.6',
    variables: { admin_password: { value: 'bench-admin-Pa55' } },
    planned_values: { root_module: {} },
    resource_changes: changes,
    resource_drift: drift,
    configuration: { root_module: { variables: { admin_password: { sensitive: true } } } },
  };
}
