/**
 * A line diff for showing two YAML renderings of one object: longest common subsequence over
 * lines, printed in unified format (`@@ -a,b +c,d @@` hunks with context). Pure. Small on
 * purpose: objects are a few hundred lines, and the common prefix and suffix are stripped
 * before the quadratic part runs.
 */

/** One line of a diff: kept (`' '`), removed (`'-'`) or added (`'+'`). */
export interface DiffLine {
  readonly op: ' ' | '-' | '+';
  readonly text: string;
}

// Above this many cells the LCS table would cost too much memory: the middle is shown as one
// removal followed by one addition, which is still a correct (if not minimal) diff.
const MAX_CELLS = 4_000_000;

/**
 * The edit script turning `before` into `after`: every line of `before` appears once as `' '`
 * or `'-'`, every line of `after` once as `' '` or `'+'`, in order; the kept lines are a longest
 * common subsequence (for inputs whose differing middle is under a few million line pairs).
 * Within a change, removals come before additions.
 */
export function diffLines(before: readonly string[], after: readonly string[]): DiffLine[] {
  let start = 0;
  while (start < before.length && start < after.length && before[start] === after[start]) start++;
  let endB = before.length;
  let endA = after.length;
  while (endB > start && endA > start && before[endB - 1] === after[endA - 1]) {
    endB--;
    endA--;
  }
  const out: DiffLine[] = before.slice(0, start).map((text) => ({ op: ' ', text }));
  const b = before.slice(start, endB);
  const a = after.slice(start, endA);
  if (b.length * a.length > MAX_CELLS) {
    out.push(...b.map((text) => ({ op: '-' as const, text })));
    out.push(...a.map((text) => ({ op: '+' as const, text })));
  } else {
    out.push(...lcsScript(b, a));
  }
  out.push(...before.slice(endB).map((text) => ({ op: ' ' as const, text })));
  return out;
}

function lcsScript(b: readonly string[], a: readonly string[]): DiffLine[] {
  const n = b.length;
  const m = a.length;
  const width = m + 1;
  // lengths[i * width + j]: LCS length of b[i..] and a[j..].
  const lengths = new Uint32Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lengths[i * width + j] =
        b[i] === a[j]
          ? (lengths[(i + 1) * width + j + 1] ?? 0) + 1
          : Math.max(lengths[(i + 1) * width + j] ?? 0, lengths[i * width + j + 1] ?? 0);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (b[i] === a[j]) {
      out.push({ op: ' ', text: b[i++] as string });
      j++;
    } else if ((lengths[(i + 1) * width + j] ?? 0) >= (lengths[i * width + j + 1] ?? 0)) {
      out.push({ op: '-', text: b[i++] as string });
    } else {
      out.push({ op: '+', text: a[j++] as string });
    }
  }
  while (i < n) out.push({ op: '-', text: b[i++] as string });
  while (j < m) out.push({ op: '+', text: a[j++] as string });
  return out;
}

/** Options for {@link unifiedDiff}. */
export interface UnifiedDiffOptions {
  /** Unchanged lines shown around each change. Default 3. */
  readonly context?: number;
  /** The `---` and `+++` header names; without them no header is printed. */
  readonly labels?: { readonly before: string; readonly after: string };
}

const splitLines = (text: string): string[] => {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
};

/**
 * `before` and `after` (texts, compared line by line) as a unified diff, `diff -u` style: hunks
 * `@@ -start,count +start,count @@` with `context` unchanged lines around changes, and hunks
 * whose context would touch merged into one. An empty string when the texts are equal. Line
 * numbers are 1-based; an empty side is `-0,0` / `+0,0`, as `diff -u` prints it.
 */
export function unifiedDiff(before: string, after: string, opts: UnifiedDiffOptions = {}): string {
  const context = opts.context ?? 3;
  const script = diffLines(splitLines(before), splitLines(after));
  const changed = script.flatMap((l, i) => (l.op === ' ' ? [] : [i]));
  if (changed.length === 0) return '';

  // Group changed positions into hunks: a gap of more than 2*context unchanged lines splits.
  const ranges: Array<[number, number]> = [];
  for (const i of changed) {
    const last = ranges[ranges.length - 1];
    if (last && i - last[1] <= 2 * context + 1) last[1] = i;
    else ranges.push([i, i]);
  }
  // Line numbers (1-based) of each script entry on both sides.
  const oldNo: number[] = [];
  const newNo: number[] = [];
  let o = 0;
  let n = 0;
  for (const l of script) {
    if (l.op !== '+') o++;
    if (l.op !== '-') n++;
    oldNo.push(o);
    newNo.push(n);
  }
  const out: string[] = [];
  if (opts.labels) out.push(`--- ${opts.labels.before}`, `+++ ${opts.labels.after}`);
  for (const [first, last] of ranges) {
    const from = Math.max(0, first - context);
    const to = Math.min(script.length - 1, last + context);
    const lines = script.slice(from, to + 1);
    const oldCount = lines.filter((l) => l.op !== '+').length;
    const newCount = lines.filter((l) => l.op !== '-').length;
    // The line before the hunk on each side, plus one: where the hunk starts (0 when empty).
    const oldBefore = from === 0 ? 0 : (oldNo[from - 1] ?? 0);
    const newBefore = from === 0 ? 0 : (newNo[from - 1] ?? 0);
    const oldStart = oldCount === 0 ? oldBefore : oldBefore + 1;
    const newStart = newCount === 0 ? newBefore : newBefore + 1;
    out.push(`@@ -${oldStart},${oldCount} +${newStart},${newCount} @@`);
    for (const l of lines) out.push(`${l.op}${l.text}`);
  }
  return `${out.join('\n')}\n`;
}
