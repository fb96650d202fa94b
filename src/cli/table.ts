/**
 * Plain-text tables as `kubectl get` prints them: upper-case headers, columns left-aligned
 * and separated by three spaces, the last column not padded (so no trailing blanks).
 */

/** One column: its header and how a row shows it. */
export interface Column<T> {
  readonly header: string;
  readonly value: (row: T) => string;
}

const GAP = '   ';

/** A cell on one line: kubectl prints a multi-line message on one line too. */
function cell(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ').trim();
}

/** `rows` under `columns`, one line per row, each ending in `\n`. Pure. */
export function formatTable<T>(columns: readonly Column<T>[], rows: readonly T[]): string {
  const grid = [
    columns.map((c) => c.header.toUpperCase()),
    ...rows.map((r) => columns.map((c) => cell(c.value(r)))),
  ];
  const widths = columns.map((_, i) => Math.max(...grid.map((line) => [...line[i]!].length)));
  return grid
    .map((line) =>
      line
        .map((text, i) => (i === line.length - 1 ? text : text + ' '.repeat(widths[i]! - [...text].length)))
        .join(GAP)
        .trimEnd(),
    )
    .map((line) => `${line}\n`)
    .join('');
}

/**
 * An age as `kubectl get` prints it (apimachinery's `duration.HumanDuration`): `45s`,
 * `5m30s` under 10 minutes, `2h15m` under 8 hours, `3d4h` under 8 days, `400d`, `2y30d`.
 */
export function humanAge(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${h}h`;
  }
  const days = Math.floor(hours / 24);
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.floor(days / 365);
  if (hours < 24 * 365 * 8) {
    const d = days % 365;
    return d === 0 ? `${years}y` : `${years}y${d}d`;
  }
  return `${years}y`;
}
