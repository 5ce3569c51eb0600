/** The skeleton while this page's data is on its way (see PageLoading for why record pages have none). */
export { PageLoading as default } from "@/components/ui/PageLoading";
