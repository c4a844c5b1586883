/** Deep copy of JSON data (the builder's document is reactive; Vue proxies cannot be structured-cloned). */
export { jsonCopy as jsonClone } from '@fengyu/protocol';
