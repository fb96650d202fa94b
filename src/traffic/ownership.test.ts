import { describe, expect, it } from '@jest/globals';
import { otherAppliers } from './ownership.js';

const route = (managedFields: unknown[]) => ({ metadata: { name: 'web', managedFields } }) as never;
const rules = { 'f:spec': { 'f:rules': {} } };

describe('otherAppliers', () => {
  it('GIVEN Flux applying spec.rules beside the Delivery and the rollout THEN only Flux is named', () => {
    expect(
      otherAppliers(
        route([
          { manager: 'sluice-delivery', operation: 'Apply', fieldsV1: { 'f:spec': { 'f:hostnames': {} } } },
          { manager: 'sluice-rollout', operation: 'Apply', fieldsV1: rules },
          { manager: 'kustomize-controller', operation: 'Apply', fieldsV1: rules },
        ]),
        ['spec', 'rules'],
      ),
    ).toEqual(['kustomize-controller']);
  });

  it('GIVEN a manual edit (Update) of spec.rules THEN it is not an applier (the next forced apply replaces it)', () => {
    expect(
      otherAppliers(route([{ manager: 'kubectl-edit', operation: 'Update', fieldsV1: rules }]), [
        'spec',
        'rules',
      ]),
    ).toEqual([]);
  });
});
