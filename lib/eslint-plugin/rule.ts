import type { TSESLint } from '@typescript-eslint/utils';

/**
 * A rule of this plugin: a typescript-eslint rule module (what `RuleTester` runs) with its name.
 * @internal
 */
export type ResilienceRule<
  MessageIds extends string,
  Options extends readonly unknown[] = [],
> = TSESLint.RuleModule<MessageIds, Options> & {
  readonly name: string;
};

/** Builds a rule of type `problem` with its description and messages. @internal */
export function defineRule<
  MessageIds extends string,
  Options extends readonly unknown[] = [],
>(rule: {
  name: string;
  description: string;
  messages: Record<MessageIds, string>;
  schema?: TSESLint.RuleMetaData<MessageIds, unknown, Options>['schema'];
  defaultOptions: Options;
  hasSuggestions?: boolean;
  create: TSESLint.RuleModule<MessageIds, Options>['create'];
}): ResilienceRule<MessageIds, Options> {
  return {
    name: rule.name,
    meta: {
      type: 'problem',
      docs: { description: rule.description },
      messages: rule.messages,
      schema: rule.schema ?? [],
      ...(rule.hasSuggestions ? { hasSuggestions: true } : {}),
    },
    defaultOptions: rule.defaultOptions,
    create: rule.create,
  };
}
