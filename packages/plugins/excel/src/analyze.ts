import { type CellKind, type CellJson, cellToJson, columnLetter, type ColumnType, inferType, kindOf, splitKey } from './cells';
import { headerOf, nameAt } from './header';
import { openSheets } from './sheet-stream';

/**
 * `excel_analyze`: one streaming pass over every sheet — column names from the header row,
 * an inferred type per column, non-empty counts, up to 1,000 distinct values counted per column
 * (enough to judge a split column), a few sample values and the data row count.
 */

export const DISTINCT_CAP = 1000;

export interface ColumnInfo {
  name: string;
  letter: string;
  index: number;
  type: ColumnType;
  nonEmpty: number;
  distinct: number;
  distinctCapped: boolean;
  samples: CellJson[];
}

export interface SheetInfo {
  name: string;
  rowCount: number;
  columnCount: number;
  headerRow: number;
  columns: ColumnInfo[];
}

interface Acc {
  kinds: Partial<Record<CellKind, number>>;
  nonEmpty: number;
  distinct: Set<string>;
  capped: boolean;
  samples: CellJson[];
}

export async function analyzeWorkbook(path: string, headerRow: number, signal?: AbortSignal): Promise<SheetInfo[]> {
  const sheets: SheetInfo[] = [];
  for await (const sheet of openSheets(path, { signal })) {
    let names: ReturnType<typeof headerOf> | undefined;
    const acc = new Map<number, Acc>();
    let rowCount = 0;
    for await (const row of sheet.rows) {
      if (row.number < headerRow) continue;
      if (!names) {
        names = row.number === headerRow ? headerOf(row) : { names: [], indexes: [] };
        if (row.number === headerRow) continue;
      }
      if (!row.hasValues) continue;
      rowCount++;
      const values = row.values as unknown[];
      for (let i = 1; i < values.length; i++) {
        const v = values[i] as never;
        const kind = kindOf(v);
        if (kind === 'empty') continue;
        let a = acc.get(i);
        if (!a) acc.set(i, (a = { kinds: {}, nonEmpty: 0, distinct: new Set(), capped: false, samples: [] }));
        a.kinds[kind] = (a.kinds[kind] ?? 0) + 1;
        a.nonEmpty++;
        const key = splitKey(v);
        if (a.distinct.size < DISTINCT_CAP) a.distinct.add(key);
        else if (!a.distinct.has(key)) a.capped = true;
        if (a.samples.length < 5) a.samples.push(cellToJson(v));
      }
    }
    const header = names ?? { names: [], indexes: [] };
    const indexes = [...new Set([...header.indexes, ...acc.keys()])].sort((x, y) => x - y);
    const columns = indexes.map((index): ColumnInfo => {
      const a = acc.get(index);
      return {
        name: nameAt(header, index),
        letter: columnLetter(index),
        index,
        type: a ? inferType(a.kinds) : 'empty',
        nonEmpty: a?.nonEmpty ?? 0,
        distinct: a?.distinct.size ?? 0,
        distinctCapped: a?.capped ?? false,
        samples: a?.samples ?? [],
      };
    });
    sheets.push({ name: sheet.name, rowCount, columnCount: columns.length, headerRow, columns });
  }
  return sheets;
}

/** One line a person (or model) can read. */
export function summarize(path: string, sheets: SheetInfo[]): string {
  const file = path.split('/').pop();
  if (sheets.length === 0) return `${file} has no sheets.`;
  const parts = sheets.map((s) => `"${s.name}" (${s.rowCount} rows; ${s.columns.map((c) => `${c.name}: ${c.type}`).join(', ') || 'no columns'})`);
  return `${file}: ${sheets.length} sheet(s) — ${parts.join('; ')}`;
}
