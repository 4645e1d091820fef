/* Linked first among codec_bench's own objects: the reference codecs that
 * follow it (nginx's Huffman functions, then libnghttp2) start at a page
 * boundary whatever the size of what the linker puts before them (every
 * object's cold parts and static initializers), so that a change to the
 * codec does not move their code within a page. */
__attribute__((aligned(4096), used)) void hpack_bench_refs_start(void) {}
