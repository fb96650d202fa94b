import { execFile } from 'node:child_process';
import type { KustomizeRunner } from './render.js';

/**
 * A `KustomizeRunner` backed by `kubectl kustomize` (kustomize v5 is built into kubectl).
 * The load restrictor stays at its default, `LoadRestrictionsRootOnly`, so a kustomization
 * cannot read files outside its own directory tree — render only checks the paths it walks.
 * Output is capped (64 MiB) and the run bounded by `timeoutMs`; stderr becomes the error
 * message (render reports it with the kustomization's path).
 */
export function kubectlKustomize(opts: { kubectl?: string; timeoutMs?: number } = {}): KustomizeRunner {
  const kubectl = opts.kubectl ?? 'kubectl';
  return (dir) =>
    new Promise((resolve, reject) => {
      execFile(
        kubectl,
        ['kustomize', dir],
        {
          timeout: opts.timeoutMs ?? 60_000,
          maxBuffer: 64 * 1024 * 1024,
          env: { PATH: process.env.PATH ?? '' },
        },
        (err, stdout, stderr) => {
          if (err) {
            const detail = String(stderr).trim().split('\n').slice(-3).join(' ') || err.message;
            reject(new Error(detail, { cause: err }));
          } else {
            resolve(String(stdout));
          }
        },
      );
    });
}
