/** AI chat conversations as the API answers them (the host and the UI share this shape). */
export interface ConversationSummary {
  /** The conversation's id. */
  id: string;
  /** The first line of its first message, at most 80 characters (`Conversation` when that is empty). */
  title: string;
  /** The model backend it was started with. */
  backend?: string;
  /** The model it was started with. */
  model?: string;
  /** When it was started (ISO-8601 UTC). */
  createdAt: string;
  /** When its last message was added (ISO-8601 UTC). */
  updatedAt: string;
}
