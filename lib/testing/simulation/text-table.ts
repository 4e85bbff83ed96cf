/**
 * A plain-text table as the simulator's reports print it: a title, a blank line, the header, a rule
 * of dashes, then the rows; the first `textColumns` columns left-aligned, the others (figures)
 * right-aligned, two spaces between columns. @internal
 */
export function textTable(
  title: string,
  header: readonly string[],
  rows: readonly (readonly string[])[],
  textColumns: number,
): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (i < textColumns ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ');
  return [title, '', line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join(
    '\n',
  );
}
