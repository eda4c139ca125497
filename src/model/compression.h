// Compressed snapshot files: zstd and gzip, written and read transparently.
//
// Writers choose by the file name (node.json.zst, node.json.gz); readers go
// by the first bytes (the formats' magic numbers), so a compressed file is
// read whatever it is called. A 20k-service node's snapshot is ~100 MB of
// JSON and a few MB compressed (BENCHMARKS.md).
//
// Decompression happens at the file layer: the snapshot reader's input
// buffer is filled by a Decompressor instead of read(2) (so the lean loader
// scans decompressed bytes as before, without a whole-file copy), and the
// whole-file readers (read_file, read_file_bytes: import's inputs) return the
// decompressed bytes. Compression happens at the output sink: a FILE* whose
// bytes are compressed on their way to the real file, so the snapshot writer
// does not know about it and plain output keeps its direct writev path.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "model/json.h"

namespace dpscope::model {

enum class Compression : uint8_t { None, Zstd, Gzip };

const char* to_string(Compression c);

// By the name's suffix: ".zst" zstd, ".gz" gzip, anything else none.
Compression compression_for_name(std::string_view path);

// A suffix naming a compression dpscope does not write (.xz, .bz2, .lz4,
// .lzma, .Z), "" for none: writing plain JSON under such a name would mislead.
std::string_view unsupported_compression_suffix(std::string_view path);

// A node snapshot's file name in a cluster folder: *.json, *.json.zst, *.json.gz.
bool is_snapshot_file_name(std::string_view name);

// By the first bytes of a file (at least 4 for an answer other than None).
Compression compression_of(std::string_view head);

// The whole decompressed content of `data` (one or more concatenated frames
// or members, as zstd -d / gzip -d accept). Throws InputError(origin, 0, ...)
// when the data is corrupt, fails its checksum, is truncated, or has bytes
// after its end that are not another frame.
FileBytes decompress(Compression c, std::string_view data, const std::string& origin);

// Decompresses as it is read: from a file descriptor (not owned, read in
// 256 KiB pieces) or from memory. read() gives up to `size` bytes of content,
// 0 at its end; it throws InputError(origin, 0, ...) as decompress() does --
// a stream cut short is an error at its end, never a silent short read.
class Decompressor {
 public:
  Decompressor(Compression c, int fd, std::string origin);
  Decompressor(Compression c, std::string_view data, std::string origin);
  ~Decompressor();
  Decompressor(const Decompressor&) = delete;
  Decompressor& operator=(const Decompressor&) = delete;
  size_t read(char* out, size_t size);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A FILE* whose bytes are compressed into `out` (which stays open):
//   CompressingFile z(out, Compression::Zstd);
//   write_snapshot(s, z.get());
//   z.finish();            // ends the frame; throws std::runtime_error on a write error
// zstd: level 3 (the zstd tool's default) with its content checksum, on
// worker threads so compression overlaps rendering; gzip: level 6 (gzip's
// default), CRC-32 and length in the trailer.
class CompressingFile {
 public:
  CompressingFile(std::FILE* out, Compression c);
  ~CompressingFile();  // without finish(): an unfinished (invalid) stream
  CompressingFile(const CompressingFile&) = delete;
  CompressingFile& operator=(const CompressingFile&) = delete;

  std::FILE* get() const { return file_; }
  void finish();

  struct Encoder;  // zstd or zlib state, and `out`

 private:
  std::unique_ptr<Encoder> encoder_;
  std::FILE* file_ = nullptr;
};

}  // namespace dpscope::model
