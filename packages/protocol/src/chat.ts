/** AI chat conversations as the API answers them (the host and the UI share this shape). */
export interface ConversationSummary {
  id: string;
  title: string;
  backend?: string;
  model?: string;
  createdAt: string;
  updatedAt: string;
}
