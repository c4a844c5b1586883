/** Messages of the secrets domain (the vault, references, start-up key checks), in both languages. */
export const en: Record<string, string> = {
  // errors
  secret_name_invalid: 'The secret name "{name}" is invalid: use a letter or _ first, then letters, digits or _ (at most 64 characters).',
  secret_value_invalid: 'The value of secret "{name}" is invalid: {reason}. Send {"value": "…"} with 1 to 65536 characters.',
  secret_not_found: 'There is no secret named "{name}".',
  secrets_key_missing: 'Encrypted secrets exist in this database, but the secrets key is missing ({where}). Restore $FENGYU_HOME/secrets.key or set FENGYU_SECRETS_KEY to the key they were stored with; nothing was changed.',
  secrets_key_wrong: 'The secrets key ({where}) does not decrypt the secrets stored in this database: it is not the key they were stored with. Restore the right key; nothing was changed.',
  secrets_key_invalid: 'The secrets key ({where}) is invalid: {reason}. A key is 32 random bytes written as 64 hexadecimal characters or base64.',
  // problems (details[])
  secret_unknown: 'Step "{stepId}" uses the secret "{name}", which does not exist. Add it under Settings → Secrets.',
  secret_not_allowed_here: 'The secret "{name}" may not be used in {field}: secrets may stand only in a tool step\'s arguments, never in text a model reads.',
};

export const zhCN: Record<string, string> = {
  secret_name_invalid: '密钥名称“{name}”无效：首字符须为字母或 _，其后为字母、数字或 _（最多 64 个字符）。',
  secret_value_invalid: '密钥“{name}”的值无效：{reason}。请发送 {"value": "…"}，长度为 1 到 65536 个字符。',
  secret_not_found: '不存在名为“{name}”的密钥。',
  secrets_key_missing: '数据库中存有加密的密钥，但密钥文件缺失（{where}）。请恢复 $FENGYU_HOME/secrets.key，或将 FENGYU_SECRETS_KEY 设为存储时所用的密钥；未做任何更改。',
  secrets_key_wrong: '密钥（{where}）无法解密本数据库中存储的密钥：它不是存储时所用的密钥。请恢复正确的密钥；未做任何更改。',
  secrets_key_invalid: '密钥（{where}）无效：{reason}。密钥为 32 个随机字节，写作 64 个十六进制字符或 base64。',
  secret_unknown: '步骤“{stepId}”使用了不存在的密钥“{name}”。请在“设置 → 密钥”中添加。',
  secret_not_allowed_here: '密钥“{name}”不能用于 {field}：密钥只能出现在工具步骤的参数中，绝不能出现在模型读取的文本里。',
};
