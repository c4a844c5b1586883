/** Messages of the workflows domain (error codes and problem codes), in both languages. */
export const en: Record<string, string> = {};

export const zhCN: Record<string, string> = {};
