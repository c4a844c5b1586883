/**
 * Pixels a tool result carries for the model only. A tool attaches an image to the result object
 * it returns; events and history keep the compact JSON of that object (a FileRef, never base64),
 * and the tool loop, when the backend accepts images in tool results, adds the image part.
 */

export interface ModelImage {
  data: Buffer;
  mediaType: string;
}

const images = new WeakMap<object, ModelImage>();

export function attachModelImage<T extends object>(result: T, image: ModelImage): T {
  images.set(result, image);
  return result;
}

export function modelImageOf(result: unknown): ModelImage | undefined {
  return result !== null && typeof result === 'object' ? images.get(result) : undefined;
}
