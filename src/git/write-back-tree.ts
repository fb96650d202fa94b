/**
 * The pure part of Git write-back: what a rollback commit's tree holds, computed on flat
 * maps of repo-relative paths to tree entries. isomorphic-git has no `revert`
 * (isomorphic-git#1209), so the three-way rule is ours; reading and writing trees is the
 * executor's job (write-back.ts).
 */

/** One blob in a tree: its mode (`100644`, `100755`, `120000`, `160000`) and object id. */
export interface TreeEntry {
  readonly mode: string;
  readonly oid: string;
}

/** A whole tree, flattened: `deploy/app.yaml` → entry. Directories are implied by the paths. */
export type FlatTree = ReadonlyMap<string, TreeEntry>;

/** The outcome of reverting one commit onto a tip. */
export type RevertResult =
  | { readonly clean: true; readonly tree: FlatTree; readonly changed: readonly string[] }
  | { readonly clean: false; readonly conflicts: readonly string[] };

const same = (a: TreeEntry | undefined, b: TreeEntry | undefined): boolean =>
  a === undefined ? b === undefined : b !== undefined && a.mode === b.mode && a.oid === b.oid;

/**
 * Reverts commit C (tree `bad`, first parent's tree `parent`) on top of tip H (`head`), path
 * by path, as `git revert` does when it needs no content merge: for every path C changed
 * (added, deleted or modified), where H still holds C's entry, H gets P's (an added file is
 * deleted, a deleted one comes back); where H already holds P's, nothing to do; anything else
 * was changed again after C and is a conflict — never guessed at. Pure.
 */
export function revertTree(parent: FlatTree, bad: FlatTree, head: FlatTree): RevertResult {
  const out = new Map(head);
  const conflicts: string[] = [];
  const changed: string[] = [];
  const paths = new Set([...parent.keys(), ...bad.keys()]);
  for (const path of [...paths].sort()) {
    const p = parent.get(path);
    const c = bad.get(path);
    if (same(p, c)) continue;
    const h = head.get(path);
    if (same(h, c)) {
      if (p) out.set(path, p);
      else out.delete(path);
      changed.push(path);
    } else if (!same(h, p)) {
      conflicts.push(path);
    }
  }
  if (conflicts.length > 0) return { clean: false, conflicts };
  // A file and a directory of the same name cannot both exist: reviving `a` while H has `a/b`.
  const clash = fileDirectoryClashes(out);
  if (clash.length > 0) return { clean: false, conflicts: clash };
  return { clean: true, tree: out, changed };
}

/**
 * `head` with the files of `scope` restored to `good`'s contents: every path in `paths`
 * (exact files) — or, when `paths` is empty, every path under directory `dir` — takes the
 * entry it has in `good`, or is removed when `good` has none. Paths outside the scope keep
 * H's entries, so unrelated commits after the bad one survive. Pure.
 */
export function restoreTree(
  good: FlatTree,
  head: FlatTree,
  scope: { paths: readonly string[]; dir: string },
): { tree: FlatTree; changed: string[] } {
  const inScope = scopeMatcher(scope);
  const out = new Map(head);
  const changed: string[] = [];
  const candidates = new Set([...good.keys(), ...head.keys()].filter(inScope));
  for (const path of [...candidates].sort()) {
    const g = good.get(path);
    if (same(g, head.get(path))) continue;
    if (g) out.set(path, g);
    else out.delete(path);
    changed.push(path);
  }
  return { tree: out, changed };
}

/** Normalises `./deploy/`, `deploy`, `/deploy` and `.` to `deploy` / `` (the repo root). */
export function normalizeRepoPath(path: string): string {
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw new Error(`path ${JSON.stringify(path)} must not contain ".."`);
  return parts.join('/');
}

function scopeMatcher(scope: { paths: readonly string[]; dir: string }): (path: string) => boolean {
  if (scope.paths.length > 0) {
    const files = new Set(scope.paths.map(normalizeRepoPath));
    return (p) => files.has(p);
  }
  const dir = normalizeRepoPath(scope.dir);
  return dir === '' ? () => true : (p) => p === dir || p.startsWith(`${dir}/`);
}

function fileDirectoryClashes(tree: FlatTree): string[] {
  const clashes: string[] = [];
  for (const path of tree.keys()) {
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) {
      const prefix = parts.slice(0, i).join('/');
      if (tree.has(prefix)) clashes.push(prefix);
    }
  }
  return [...new Set(clashes)].sort();
}

/** A nested tree ready to write bottom-up: each directory's entries, sorted as Git wants. */
export interface NestedTree {
  readonly files: Map<string, TreeEntry>;
  readonly dirs: Map<string, NestedTree>;
}

/** `flat` as nested directories (empty directories cannot exist in Git, so none appear). Pure. */
export function nestTree(flat: FlatTree): NestedTree {
  const root: NestedTree = { files: new Map(), dirs: new Map() };
  for (const [path, entry] of flat) {
    const parts = path.split('/');
    let node = root;
    for (const dir of parts.slice(0, -1)) {
      let next = node.dirs.get(dir);
      if (!next) {
        next = { files: new Map(), dirs: new Map() };
        node.dirs.set(dir, next);
      }
      node = next;
    }
    node.files.set(parts[parts.length - 1]!, entry);
  }
  return root;
}
