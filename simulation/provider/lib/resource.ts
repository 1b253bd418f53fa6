// driftline_object: the one resource of the test provider, planned and applied the way a real
// provider does it (tfplugin6 PlanResourceChange / ApplyResourceChange / ReadResource).
import { UNKNOWN, type Value } from './msgpack';
import { newObjectId, type ObjectsFile, readObjects, type StoredObject, writeObjects } from './objects';

export const RESOURCE = 'driftline_object';

const str = Buffer.from('"string"');

/** tfplugin6 Schema of driftline_object. `shape` forces replacement (answered in PlanResourceChange). */
export const resourceSchema = {
  version: 0,
  block: {
    version: 0,
    attributes: [
      { name: 'id', type: str, computed: true, description: 'Identifier the test API gave the object.' },
      { name: 'name', type: str, required: true, description: 'Name of the object.' },
      {
        name: 'value',
        type: str,
        optional: true,
        description: 'A plain value (drift: edit it in the file).',
      },
      { name: 'secret', type: str, optional: true, sensitive: true, description: 'A sensitive value.' },
      { name: 'shape', type: str, optional: true, description: 'Changing it replaces the object.' },
    ],
  },
};

/** tfplugin6 Schema of the provider block. */
export const providerSchema = {
  version: 0,
  block: {
    version: 0,
    attributes: [
      {
        name: 'path',
        type: str,
        optional: true,
        description: 'JSON file holding the objects (else the DRIFTLINE_TESTOBJ_FILE environment variable).',
      },
    ],
  },
};

export interface Diag {
  severity: 'ERROR' | 'WARNING';
  summary: string;
  detail: string;
}

type Obj = { [key: string]: Value };

function asObj(v: Value): Obj | null {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : null;
}

function strOrNull(v: Value | undefined): string | null {
  return typeof v === 'string' ? v : null;
}

/** Warnings and errors a real provider's validation would give. */
export function validate(config: Value): Diag[] {
  const c = asObj(config);
  const name = c ? c.name : null;
  if (typeof name === 'string' && name.startsWith('warn-')) {
    return [
      {
        severity: 'WARNING',
        summary: 'Deprecated object name prefix',
        detail: `The name prefix "warn-" is deprecated; rename the object.`,
      },
    ];
  }
  return [];
}

export interface Planned {
  planned: Value;
  requiresReplace: string[];
}

export function plan(prior: Value, proposed: Value): Planned {
  const p = asObj(proposed);
  if (!p) return { planned: null, requiresReplace: [] };
  const before = asObj(prior);
  if (!before) return { planned: { ...p, id: UNKNOWN }, requiresReplace: [] };
  if (strOrNull(before.shape) !== strOrNull(p.shape) || p.shape === UNKNOWN) {
    return { planned: { ...p, id: UNKNOWN }, requiresReplace: ['shape'] };
  }
  return { planned: { ...p, id: before.id ?? null }, requiresReplace: [] };
}

function toStored(o: Obj): StoredObject {
  return {
    name: strOrNull(o.name) ?? '',
    value: strOrNull(o.value),
    secret: strOrNull(o.secret),
    shape: strOrNull(o.shape),
  };
}

function toState(id: string, s: StoredObject): Obj {
  return { id, name: s.name, value: s.value, secret: s.secret, shape: s.shape };
}

export function read(file: string, current: Value): Value {
  const c = asObj(current);
  const id = c ? strOrNull(c.id) : null;
  if (!id) return null;
  const stored = readObjects(file).objects[id];
  return stored ? toState(id, stored) : null;
}

export interface Applied {
  state: Value;
  diagnostics: Diag[];
}

export function apply(file: string, prior: Value, planned: Value): Applied {
  const data: ObjectsFile = readObjects(file);
  const before = asObj(prior);
  const after = asObj(planned);
  const priorId = before ? strOrNull(before.id) : null;
  if (!after) {
    if (priorId) delete data.objects[priorId];
    writeObjects(file, data);
    return { state: null, diagnostics: [] };
  }
  const stored = toStored(after);
  if ((data.failApply ?? []).includes(stored.name)) {
    return {
      state: prior,
      diagnostics: [
        {
          severity: 'ERROR',
          summary: 'Test API refused the object',
          detail: `Object "${stored.name}" is listed in failApply of the objects file; remove it from that list to let apply succeed.`,
        },
      ],
    };
  }
  const id = strOrNull(after.id) ?? newObjectId();
  // A replacement (id unknown with a prior id) removes the old object first (destroy-before-create).
  if (priorId && priorId !== id) delete data.objects[priorId];
  data.objects[id] = stored;
  writeObjects(file, data);
  return { state: toState(id, stored), diagnostics: [] };
}
