/**
 * Deep copy of JSON data. Used instead of structuredClone because the builder's document is
 * reactive (Vue proxies cannot be structured-cloned) and the graph is plain JSON by contract.
 */
export function jsonClone<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}
