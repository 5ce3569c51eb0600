import { Field, ObjectType } from "type-graphql";

@ObjectType("PageInfo", { simpleResolvers: true })
export class PageInfo {
  @Field(() => Boolean)
  hasNextPage!: boolean;

  @Field(() => String, { nullable: true, description: "Opaque; pass as `after` to get the next page" })
  endCursor!: string | null;
}
