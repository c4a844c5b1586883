import MarkdownIt from 'markdown-it';

/**
 * Markdown as the model writes it, rendered to HTML that is safe to insert: raw HTML in the text is
 * shown as text (never parsed), links open outside the app and only http(s)/mailto links are
 * kept (markdown-it's link validation drops javascript:, vbscript: and data: URLs).
 */
const md = new MarkdownIt({ html: false, linkify: true, breaks: true });

const defaultLink = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  const token = tokens[idx];
  if (token) {
    token.attrSet('target', '_blank');
    token.attrSet('rel', 'noopener noreferrer');
  }
  return defaultLink(tokens, idx, options, env, self);
};

export function renderMarkdown(text: string): string {
  return md.render(text);
}
