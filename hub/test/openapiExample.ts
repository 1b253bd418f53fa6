/** One request to send, and the status it must get (the OpenAPI examples: openapiExamples.ts). */
export interface Example {
  /** `METHOD /openapi/{path}` of the operation it exercises. */
  op: string;
  url: string;
  init?: RequestInit;
  status: number;
}
