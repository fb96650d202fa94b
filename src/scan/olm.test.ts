import { bundleCap, cappedBelow, capFromOpenShiftVersions, kubeToOpenShift, openShiftToKube } from './olm.js';

const FIXTURES = new URL('../../test/fixtures/scan/olm/', import.meta.url).pathname;

describe('OpenShift ↔ Kubernetes', () => {
  it.each([
    ['4.1', '1.13'],
    ['4.2', '1.14'],
    ['4.3', '1.16'],
    ['4.8', '1.21'],
    ['4.16', '1.29'],
    ['4.19', '1.32'],
  ])('GIVEN OpenShift %s THEN Kubernetes %s, and back', (ocp, kube) => {
    expect(openShiftToKube(ocp)).toBe(kube);
    expect(kubeToOpenShift(kube)).toBe(ocp);
  });
  it('GIVEN Kubernetes 1.15 (no OpenShift) or OpenShift 3.11 THEN undefined / a clear error', () => {
    expect(kubeToOpenShift('1.15')).toBeUndefined();
    expect(() => openShiftToKube('3.11')).toThrow(/only 4.x/);
  });
});

describe('caps', () => {
  it.each([
    ['v4.6-v4.8', '4.8'],
    ['=v4.8', '4.8'],
    ['v4.6', undefined],
    ['v4.5,v4.6', undefined],
  ])('GIVEN com.redhat.openshift.versions %j THEN cap %s', (value, cap) => {
    expect(capFromOpenShiftVersions(value)).toBe(cap);
  });

  it('GIVEN the capped fixture WHEN read THEN the lowest of its caps; capped below 1.29 but not below 1.21', async () => {
    const cap = await bundleCap(`${FIXTURES}capped`, [
      {
        metadata: {
          name: 'c',
          annotations: { 'olm.properties': '[{"type":"olm.maxOpenShiftVersion","value":"4.9"}]' },
        },
      },
    ]);
    expect(cap?.maxOpenShiftVersion).toBe('4.8');
    expect(cappedBelow(cap!, '1.29')).toBe(true);
    expect(cappedBelow(cap!, '1.21')).toBe(false);
  });

  it('GIVEN a CSV with olm.maxOpenShiftVersion only THEN that cap; a bad value THEN an error naming the field', async () => {
    const csv = (value: unknown) => ({
      metadata: {
        name: 'op.v1',
        annotations: { 'olm.properties': JSON.stringify([{ type: 'olm.maxOpenShiftVersion', value }]) },
      },
    });
    expect((await bundleCap(`${FIXTURES}uncapped`, [csv('4.10')]))?.source).toBe(
      'CSV op.v1 olm.maxOpenShiftVersion',
    );
    expect(await bundleCap(`${FIXTURES}uncapped`, [])).toBeUndefined();
    await expect(bundleCap(`${FIXTURES}uncapped`, [csv('latest')])).rejects.toThrow(
      /olm.maxOpenShiftVersion "latest"/,
    );
    await expect(
      bundleCap(`${FIXTURES}uncapped`, [
        { metadata: { name: 'x', annotations: { 'olm.properties': '[oops' } } },
      ]),
    ).rejects.toThrow(/olm.properties"\] is not JSON/);
  });
});
