// The operator CLI for CanaryReleases against the shared kube-local hub: `get canaries`,
// `status canary` and `promote|abort|pause|resume|retry`. The status is hand-written through
// the status subresource, as the rollout controller would have left it; the commands run
// in-process through runCli (the same code as the built `sluice`, without a rebuild).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KubernetesObject } from '@kubernetes/client-node';
import { parse } from 'yaml';
import {
  OPERATOR_ACTIONS,
  type CanaryRelease,
  type CanaryReleaseStatus,
} from '../../src/api/canary-release.js';
import { runCli } from '../../src/cli/run.js';
import { writeStatus } from '../../src/kube/status.js';
import { captureOutput } from '../support/capture-output.js';
import { kubeconfigPath, testClient, uniqueName } from '../support/clusters.js';
import { createNamespace, deleteObject, ensureCrds } from '../support/sluice-objects.js';

const hub = testClient('hub');
const ns = uniqueName('cli-canary');
const BAD = 'b'.repeat(40);
const REF = { apiVersion: 'sluice.dev/v1', plural: 'canaryreleases', namespace: ns };

/** Runs `sluice ARGS --kubeconfig <hub>` in-process; resolves with its exit code and output. */
async function sluice(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = captureOutput();
  try {
    const code = await runCli([...args, '--kubeconfig', kubeconfigPath('hub')]);
    return { code, stdout: io.out(), stderr: io.err() };
  } finally {
    io.restore();
  }
}

const get = (name: string) =>
  hub.raw.getRaw<CanaryRelease>({
    apiVersion: 'sluice.dev/v1',
    kind: 'CanaryRelease',
    metadata: { namespace: ns, name },
  });

function spec() {
  return {
    deliveryRef: { name: 'web' },
    targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
    service: { port: 80 },
    strategy: 'canary',
    trafficRouting: { provider: 'gatewayAPI', gatewayAPI: { httpRoute: { name: 'web' } } },
    steps: { weights: [5, 20, 50] },
    analysis: {
      metrics: [{ name: 'error-rate', templateRef: { name: 'error-rate' }, thresholdRange: { max: 0.01 } }],
    },
    gitWriteBack: { mode: 'revert' },
  };
}

const rolledBack: CanaryReleaseStatus = {
  phase: 'RolledBack',
  canaryWeight: 0,
  step: '2/3',
  failedChecks: 2,
  lastScore: 0.5,
  revision: `main@sha1:${BAD}`,
  clusters: ['member-1'],
  transitions: [
    {
      at: '2026-11-30T12:00:00Z',
      phase: 'Progressing',
      canaryWeight: 5,
      step: '1/3',
      reason: 'Started',
      message: 'new revision',
    },
    {
      at: '2026-11-30T12:01:00Z',
      phase: 'Progressing',
      canaryWeight: 20,
      step: '2/3',
      reason: 'StepAdvanced',
      message: 'score 1.00',
    },
    {
      at: '2026-11-30T12:02:10Z',
      phase: 'RolledBack',
      canaryWeight: 0,
      step: '2/3',
      reason: 'AnalysisFailed',
      message: 'failed checks 2 of 2',
    },
  ],
  measurements: [
    {
      metric: 'error-rate',
      cluster: 'member-1',
      canaryWeight: 20,
      value: '0.2',
      threshold: '<= 0.01',
      outcome: 'Failed',
      measuredAt: '2026-11-30T12:01:30Z',
    },
  ],
  rollback: {
    at: '2026-11-30T12:02:10Z',
    step: '2/3',
    canaryWeight: 20,
    reason: 'AnalysisFailed',
    message: 'score 0.50 below 0.95',
    metric: 'error-rate',
    value: '0.2',
    threshold: '<= 0.01',
    revision: `main@sha1:${BAD}`,
    writeBack: { mode: 'revert', method: 'revert', commit: 'c0ffee1234567890c0ffee1234567890c0ffee12' },
  },
  rolledBackRevisions: [`main@sha1:${BAD}`],
};

beforeAll(async () => {
  await ensureCrds(hub);
  await createNamespace(hub, ns);
  for (const name of ['web', 'api']) {
    await hub.raw.applyRaw(
      {
        apiVersion: 'sluice.dev/v1',
        kind: 'CanaryRelease',
        metadata: { namespace: ns, name },
        spec: spec(),
      } as unknown as KubernetesObject,
      { fieldManager: 'sluice-test', force: true },
    );
  }
  // As the rollout controller would have left it: the CLI only reads status.
  await writeStatus(hub, { ...REF, name: 'web' }, rolledBack);
  await writeStatus(
    hub,
    { ...REF, name: 'api' },
    { phase: 'Progressing', canaryWeight: 5, step: '1/3', lastScore: 1 },
  );
});

afterAll(async () => {
  await deleteObject(hub, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
});

describe('sluice get canaries', () => {
  it('GIVEN two releases THEN a table with NAME PHASE STEP WEIGHT SCORE AGE, and -A adds NAMESPACE', async () => {
    const { code, stdout, stderr } = await sluice('get', 'canaries', '-n', ns);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+PHASE\s+STEP\s+WEIGHT\s+SCORE\s+AGE$/);
    expect(lines[1]).toMatch(/^api\s+Progressing\s+1\/3\s+5\s+1\.00\s+\d+s$/);
    expect(lines[2]).toMatch(/^web\s+RolledBack\s+2\/3\s+0\s+0\.50\s+\d+s$/);
    const all = await sluice('get', 'crel', '-A');
    expect(all.stdout.split('\n')[0]).toMatch(/^NAMESPACE\s+NAME\s+PHASE\s+STEP\s+WEIGHT\s+SCORE\s+AGE$/);
    expect(all.stdout).toMatch(new RegExp(`^${ns}\\s+web\\s+RolledBack`, 'm'));
  });

  it('GIVEN -o yaml and -o json THEN the objects with their status', async () => {
    const yaml = await sluice('get', 'canaries', '-n', ns, '-o', 'yaml');
    expect(yaml.code).toBe(0);
    const list = parse(yaml.stdout) as { kind: string; items: CanaryRelease[] };
    expect(list.items.map((i) => [i.metadata.name, i.status?.phase])).toEqual([
      ['api', 'Progressing'],
      ['web', 'RolledBack'],
    ]);
    const json = await sluice('get', 'canary', 'web', '-n', ns, '-o', 'json');
    expect((JSON.parse(json.stdout) as CanaryRelease).status?.rollback?.metric).toBe('error-rate');
  });
});

describe('sluice status canary', () => {
  it('GIVEN a rolled-back release THEN the reason, the failing metric against its threshold, the revert commit, the timeline and the measurements', async () => {
    const { code, stdout, stderr } = await sluice('status', 'canary', 'web', '-n', ns);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain(`CanaryRelease ${ns}/web\nPhase:          RolledBack\n`);
    expect(stdout).toContain('  Reason:         AnalysisFailed: score 0.50 below 0.95\n');
    expect(stdout).toContain('  Failing metric: error-rate = 0.2 (threshold <= 0.01)\n');
    expect(stdout).toContain(
      '  Git:            reverted in commit c0ffee1234567890c0ffee1234567890c0ffee12\n',
    );
    expect(stdout).toMatch(
      /^ {2}2026-11-30T12:02:10Z\s+RolledBack\s+0\s+2\/3\s+AnalysisFailed\s+failed checks 2 of 2$/m,
    );
    expect(stdout).toContain('  weight 20% (step 2/3):\n');
    expect(stdout).toMatch(/^ {4}member-1\s+error-rate\s+0\.2\s+<= 0\.01\s+Failed\s+2026-11-30T12:01:30Z$/m);
  });

  it('GIVEN an unknown NAME THEN exit 1 naming the resource and the namespace', async () => {
    const { code, stdout, stderr } = await sluice('status', 'canary', 'nope', '-n', ns);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toBe(`sluice status: canaryreleases.sluice.dev "nope" not found in namespace ${ns}\n`);
  });

  it('GIVEN an unknown resource type THEN exit 2 with the usage', async () => {
    const { code, stderr } = await sluice('status', 'pods', 'web');
    expect(code).toBe(2);
    expect(stderr).toContain('unknown resource type "pods": use one of canary');
  });
});

describe('sluice promote|abort|pause|resume|retry', () => {
  it.each(OPERATOR_ACTIONS.map((a) => [a]))(
    'GIVEN %s THEN only the annotation sluice.dev/<action> is set, to the request time with ms; spec, generation and status untouched',
    async (action) => {
      const before = await get('web');
      const started = Date.now();
      const { code, stdout, stderr } = await sluice(action, 'web', '-n', ns);
      expect(stderr).toBe('');
      expect(code).toBe(0);
      const after = await get('web');
      const value = after.metadata.annotations?.[`sluice.dev/${action}`];
      expect(value).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(Date.parse(value!)).toBeGreaterThanOrEqual(started - 1000);
      expect(stdout).toBe(
        `canaryreleases.sluice.dev/web in namespace ${ns}: ${action} requested at ${value} (phase RolledBack, step 2/3, canary weight 0%)\n`,
      );
      expect(after.spec).toEqual(before.spec);
      expect(after.metadata.generation).toBe(before.metadata.generation);
      expect(after.status).toEqual(before.status);
    },
  );

  it('GIVEN two requests in a row THEN two different values (each is a new request)', async () => {
    await sluice('retry', 'api', '-n', ns);
    const first = (await get('api')).metadata.annotations?.['sluice.dev/retry'];
    await new Promise((r) => setTimeout(r, 5));
    await sluice('retry', 'api', '-n', ns);
    const second = (await get('api')).metadata.annotations?.['sluice.dev/retry'];
    expect(second).not.toBe(first);
  });

  it('GIVEN --wait and a controller that acknowledges THEN exit 0 with the new phase and last transition', async () => {
    const waiting = sluice('abort', 'api', '-n', ns, '--wait', '--timeout', '30s');
    // Play the controller: once the annotation is there, acknowledge it in status.
    let requested: string | undefined;
    for (let i = 0; i < 100 && !requested; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const now = await get('api');
      const v = now.metadata.annotations?.['sluice.dev/abort'];
      if (v && v !== now.status?.acknowledgedRequests?.abort) requested = v;
    }
    expect(requested).toBeDefined();
    await writeStatus(
      hub,
      { ...REF, name: 'api' },
      {
        phase: 'RolledBack',
        canaryWeight: 0,
        step: '1/3',
        acknowledgedRequests: { abort: requested },
        transitions: [
          {
            at: new Date().toISOString(),
            phase: 'RolledBack',
            canaryWeight: 0,
            step: '1/3',
            reason: 'Aborted',
            message: 'aborted by the operator',
          },
        ],
      },
    );
    const { code, stdout } = await waiting;
    expect(code).toBe(0);
    expect(stdout).toContain(
      'canaryreleases.sluice.dev/api: abort acknowledged, phase RolledBack, step 1/3, canary weight 0%: Aborted: aborted by the operator\n',
    );
  });

  it('GIVEN --wait and no controller THEN exit 1 after --timeout, saying what it waited for', async () => {
    const { code, stderr } = await sluice('pause', 'web', '-n', ns, '--wait', '--timeout', '1s');
    expect(code).toBe(1);
    expect(stderr).toMatch(
      /^sluice pause: timed out after 1s waiting for the controller to acknowledge the request: status\.acknowledgedRequests\.pause is not set, want "[^"]+"\n$/,
    );
  });

  it('GIVEN an unknown NAME THEN exit 1 naming it, and nothing is created', async () => {
    const { code, stderr } = await sluice('promote', 'nope', '-n', ns);
    expect(code).toBe(1);
    expect(stderr).toBe(`sluice promote: canaryreleases.sluice.dev "nope" not found in namespace ${ns}\n`);
    await expect(get('nope')).rejects.toThrow();
  });

  it('GIVEN no NAME or two THEN exit 2 with the usage', async () => {
    const none = await sluice('resume', '-n', ns);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('missing argument');
    expect(none.stderr).toContain('Usage: sluice resume NAME');
    const two = await sluice('resume', 'a', 'b');
    expect(two.code).toBe(2);
    expect(two.stderr).toContain('unexpected argument "b"');
  });
});
