#include "model/compression.h"

#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <new>
#include <stdexcept>
#include <thread>
#include <vector>

#include "util/error.h"

namespace dpscope::model {

namespace {

constexpr int kZstdLevel = 3;  // the zstd tool's default
constexpr int kGzipLevel = 6;  // gzip's default
constexpr int kGzipWindow = 15 + 16;  // zlib: 32 KiB window, gzip header and trailer

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// A growing output buffer that is never zero-filled: pages are touched only
// as decompressed bytes land in them.
class Growing {
 public:
  explicit Growing(size_t capacity)
      : capacity_(std::max<size_t>(capacity, 4096)), data_(new char[capacity_]) {}
  char* end() { return data_.get() + size_; }
  size_t room() const { return capacity_ - size_; }
  void grew(size_t n) { size_ += n; }
  void ensure_room() {
    if (room() > 0) return;
    std::unique_ptr<char[]> bigger(new char[capacity_ * 2]);
    std::memcpy(bigger.get(), data_.get(), size_);
    data_ = std::move(bigger);
    capacity_ *= 2;
  }
  FileBytes take() { return FileBytes{std::move(data_), size_, nullptr}; }

 private:
  size_t capacity_;
  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
};

// JSON snapshots compress 10-30x; the buffer doubles when that is not enough.
size_t first_guess(size_t compressed) { return compressed > (SIZE_MAX / 16) ? compressed : compressed * 16; }

}  // namespace

// ---- Decompressor -------------------------------------------------------

struct Decompressor::Impl {
  Compression kind;
  std::string origin;
  // Compressed input: from `fd` through `buffer`, or all of `memory` at once.
  int fd = -1;
  std::string_view memory;
  std::vector<char> buffer;
  bool eof = false;
  uint64_t consumed = 0;  // compressed bytes handed to the decoder before the current chunk
  const char* chunk = nullptr;
  size_t chunk_size = 0;

  ZSTD_DCtx* zstd = nullptr;
  ZSTD_inBuffer zin{nullptr, 0, 0};
  size_t zstd_hint = 1;  // ZSTD_decompressStream's last result: 0 = frame complete and flushed

  z_stream zlib{};
  bool zlib_ready = false, member_ended = false;
  uint64_t members = 0;

  Impl(Compression c, std::string o) : kind(c), origin(std::move(o)) {
    if (c == Compression::Zstd) {
      zstd = ZSTD_createDCtx();
      if (!zstd) throw std::bad_alloc();
    } else if (c == Compression::Gzip) {
      if (inflateInit2(&zlib, kGzipWindow) != Z_OK) throw std::bad_alloc();
      zlib_ready = true;
    } else {
      throw std::logic_error("Decompressor without a compression");
    }
  }
  ~Impl() {
    if (zstd) ZSTD_freeDCtx(zstd);
    if (zlib_ready) inflateEnd(&zlib);
  }

  // The next chunk of compressed input; false at its end.
  bool next_chunk() {
    if (eof) return false;
    consumed += chunk_size;
    if (fd < 0) {
      eof = true;
      if (memory.empty()) return false;
      chunk = memory.data();
      chunk_size = std::min<size_t>(memory.size(), 1U << 30);  // zlib counts in 32 bits
      memory.remove_prefix(chunk_size);
      eof = memory.empty();
      return true;
    }
    for (;;) {
      const ssize_t n = ::read(fd, buffer.data(), buffer.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw InputError(origin, 0, std::string("read failed: ") + std::strerror(errno));
      if (n == 0) {
        eof = true;
        chunk_size = 0;
        return false;
      }
      chunk = buffer.data();
      chunk_size = static_cast<size_t>(n);
      return true;
    }
  }

  [[noreturn]] void truncated() const {
    throw InputError(origin, 0, std::string("truncated ") + to_string(kind) + " data: the file ends inside " +
                                    (kind == Compression::Zstd ? "a frame" : "the gzip stream, before its trailer") +
                                    " (after " + std::to_string(consumed + chunk_size) +
                                    " bytes; an interrupted copy?)");
  }

  size_t read_zstd(char* out, size_t size) {
    ZSTD_outBuffer o{out, size, 0};
    for (;;) {
      if (zin.pos == zin.size && next_chunk()) zin = {chunk, chunk_size, 0};
      const bool drained = zin.pos == zin.size;
      if (drained && zstd_hint == 0) return 0;  // the last frame is complete
      zstd_hint = ZSTD_decompressStream(zstd, &o, &zin);
      if (ZSTD_isError(zstd_hint)) {
        throw InputError(origin, 0, std::string("corrupt zstd data: ") + ZSTD_getErrorName(zstd_hint) +
                                        " (near byte " + std::to_string(consumed + zin.pos) + ")");
      }
      if (o.pos > 0) return o.pos;
      if (drained) {
        if (zstd_hint == 0) return 0;
        truncated();
      }
    }
  }

  size_t read_gzip(char* out, size_t size) {
    zlib.next_out = reinterpret_cast<Bytef*>(out);
    zlib.avail_out = static_cast<uInt>(std::min<size_t>(size, UINT_MAX));
    const uInt room = zlib.avail_out;
    for (;;) {
      if (zlib.avail_in == 0 && next_chunk()) {
        zlib.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(chunk));
        zlib.avail_in = static_cast<uInt>(chunk_size);
      }
      const bool drained = zlib.avail_in == 0;
      if (member_ended) {
        if (drained) return 0;
        inflateReset(&zlib);  // another member follows (as `cat a.gz b.gz`), or trailing bytes
        member_ended = false;
      }
      const int rc = inflate(&zlib, Z_NO_FLUSH);
      const size_t produced = room - zlib.avail_out;
      if (rc == Z_STREAM_END) {
        member_ended = true;
        ++members;
        if (produced > 0) return produced;
        continue;
      }
      if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT) {
        if (members > 0 && produced == 0 && zlib.total_out == 0) {
          throw InputError(origin, 0, "unexpected bytes after the end of the gzip data (near byte " +
                                          std::to_string(consumed + chunk_size - zlib.avail_in) + ")");
        }
        throw InputError(origin, 0, std::string("corrupt gzip data: ") + (zlib.msg ? zlib.msg : "invalid stream"));
      }
      if (rc == Z_MEM_ERROR) throw std::bad_alloc();
      if (produced > 0) return produced;
      if (drained) truncated();
    }
  }
};

Decompressor::Decompressor(Compression c, int fd, std::string origin)
    : impl_(std::make_unique<Impl>(c, std::move(origin))) {
  impl_->fd = fd;
  impl_->buffer.resize(256 << 10);
}

Decompressor::Decompressor(Compression c, std::string_view data, std::string origin)
    : impl_(std::make_unique<Impl>(c, std::move(origin))) {
  impl_->memory = data;
}

Decompressor::~Decompressor() = default;

size_t Decompressor::read(char* out, size_t size) {
  if (size == 0) return 0;
  return impl_->kind == Compression::Zstd ? impl_->read_zstd(out, size) : impl_->read_gzip(out, size);
}

const char* to_string(Compression c) {
  switch (c) {
    case Compression::None: return "none";
    case Compression::Zstd: return "zstd";
    case Compression::Gzip: return "gzip";
  }
  return "?";
}

Compression compression_for_name(std::string_view path) {
  if (ends_with(path, ".zst")) return Compression::Zstd;
  if (ends_with(path, ".gz")) return Compression::Gzip;
  return Compression::None;
}

std::string_view unsupported_compression_suffix(std::string_view path) {
  for (std::string_view s : {".xz", ".bz2", ".lz4", ".lzma", ".Z", ".zstd", ".gzip", ".br"}) {
    if (ends_with(path, s)) return s;
  }
  return {};
}

bool is_snapshot_file_name(std::string_view name) {
  return ends_with(name, ".json") || ends_with(name, ".json.zst") || ends_with(name, ".json.gz");
}

Compression compression_of(std::string_view head) {
  if (head.size() >= 4 && static_cast<unsigned char>(head[0]) == 0x28 && static_cast<unsigned char>(head[1]) == 0xB5 &&
      static_cast<unsigned char>(head[2]) == 0x2F && static_cast<unsigned char>(head[3]) == 0xFD) {
    return Compression::Zstd;
  }
  // gzip: ID1 ID2, then CM 8 (deflate): three bytes no JSON text starts with.
  if (head.size() >= 3 && static_cast<unsigned char>(head[0]) == 0x1F && static_cast<unsigned char>(head[1]) == 0x8B &&
      head[2] == 8) {
    return Compression::Gzip;
  }
  return Compression::None;
}

FileBytes decompress(Compression c, std::string_view data, const std::string& origin) {
  if (c != Compression::None) {
    // A frame written in one piece records its size (the zstd tool's); a
    // streamed one (dpscope's) does not, and gzip's trailer has it mod 2^32.
    size_t hint = first_guess(data.size());
    if (c == Compression::Zstd) {
      const unsigned long long declared = ZSTD_getFrameContentSize(data.data(), data.size());
      // (A corrupt header may claim anything: believed up to a 256x ratio.)
      if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != ZSTD_CONTENTSIZE_ERROR && declared / 256 <= data.size()) {
        hint = static_cast<size_t>(declared) + 1;
      }
    } else if (data.size() >= 18) {
      uint32_t isize;
      std::memcpy(&isize, data.data() + data.size() - 4, 4);  // little-endian, as x86 and arm64
      if (isize > data.size() && isize / 256 <= data.size()) hint = static_cast<size_t>(isize) + 1;
    }
    Decompressor source(c, data, origin);
    Growing out(hint);
    for (;;) {
      out.ensure_room();
      const size_t n = source.read(out.end(), out.room());
      if (n == 0) break;
      out.grew(n);
    }
    return out.take();
  }
  FileBytes copy{std::unique_ptr<char[]>(new char[data.size() + 1]), data.size(), nullptr};
  std::memcpy(copy.data.get(), data.data(), data.size());
  return copy;
}

// ---- CompressingFile ----------------------------------------------------

struct CompressingFile::Encoder {
  std::FILE* out;
  Compression kind;
  ZSTD_CCtx* zstd = nullptr;
  z_stream zlib{};
  bool zlib_ready = false;
  std::vector<char> buffer;  // compressed bytes on their way to `out`
  int error = 0;             // errno of the first failed write to `out`

  Encoder(std::FILE* o, Compression c) : out(o), kind(c) {
    if (c == Compression::Zstd) {
      zstd = ZSTD_createCCtx();
      if (!zstd) throw std::bad_alloc();
      ZSTD_CCtx_setParameter(zstd, ZSTD_c_compressionLevel, kZstdLevel);
      ZSTD_CCtx_setParameter(zstd, ZSTD_c_checksumFlag, 1);
      // Worker threads (libzstd built with them, as Debian's is): the writing
      // thread renders while they compress. Ignored by a single-threaded build.
      const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
      if (cores > 1) ZSTD_CCtx_setParameter(zstd, ZSTD_c_nbWorkers, static_cast<int>(std::min(cores, 4U)));
      buffer.resize(ZSTD_CStreamOutSize());
    } else {
      if (deflateInit2(&zlib, kGzipLevel, Z_DEFLATED, kGzipWindow, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        throw std::bad_alloc();
      }
      zlib_ready = true;
      buffer.resize(256 << 10);
    }
  }
  ~Encoder() {
    if (zstd) ZSTD_freeCCtx(zstd);
    if (zlib_ready) deflateEnd(&zlib);
  }

  bool emit(size_t n) {
    if (n == 0) return true;
    if (std::fwrite(buffer.data(), 1, n, out) != n) {
      error = errno ? errno : EIO;
      return false;
    }
    return true;
  }

  // Compresses `data`; with `last`, ends the stream. False on a write error.
  bool put(const char* data, size_t size, bool last) {
    if (error) return false;
    if (kind == Compression::Zstd) {
      ZSTD_inBuffer in{data, size, 0};
      const ZSTD_EndDirective mode = last ? ZSTD_e_end : ZSTD_e_continue;
      for (;;) {
        ZSTD_outBuffer o{buffer.data(), buffer.size(), 0};
        const size_t left = ZSTD_compressStream2(zstd, &o, &in, mode);
        if (ZSTD_isError(left)) {
          error = EIO;
          errno = EIO;
          return false;
        }
        if (!emit(o.pos)) return false;
        if (last ? left == 0 : in.pos == in.size) return true;
      }
    }
    zlib.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
    size_t remaining = size;
    for (;;) {
      if (zlib.avail_in == 0 && remaining > 0) {
        zlib.avail_in = static_cast<uInt>(std::min<size_t>(remaining, UINT_MAX));
        remaining -= zlib.avail_in;
      }
      zlib.next_out = reinterpret_cast<Bytef*>(buffer.data());
      zlib.avail_out = static_cast<uInt>(buffer.size());
      const int rc = deflate(&zlib, last && remaining == 0 ? Z_FINISH : Z_NO_FLUSH);
      if (rc == Z_STREAM_ERROR) {
        error = EIO;
        errno = EIO;
        return false;
      }
      if (!emit(buffer.size() - zlib.avail_out)) return false;
      if (last && remaining == 0) {
        if (rc == Z_STREAM_END) return true;
      } else if (zlib.avail_in == 0 && remaining == 0 && zlib.avail_out > 0) {
        return true;
      }
    }
  }
};

namespace {

ssize_t cookie_write(void* cookie, const char* data, size_t size) {
  auto* e = static_cast<CompressingFile::Encoder*>(cookie);
  if (!e->put(data, size, false)) {
    errno = e->error;
    return 0;  // glibc's convention for a failed write: 0, errno set
  }
  return static_cast<ssize_t>(size);
}

}  // namespace

CompressingFile::CompressingFile(std::FILE* out, Compression c) : encoder_(std::make_unique<Encoder>(out, c)) {
  if (c == Compression::None) throw std::logic_error("CompressingFile without a compression");
  cookie_io_functions_t io{};
  io.write = cookie_write;
  file_ = fopencookie(encoder_.get(), "w", io);
  if (file_ == nullptr) throw std::bad_alloc();
  // The snapshot writer hands over ~1 MiB at a time; smaller writes gather here.
  std::setvbuf(file_, nullptr, _IOFBF, 1 << 20);
}

CompressingFile::~CompressingFile() {
  if (file_ != nullptr) std::fclose(file_);
}

void CompressingFile::finish() {
  std::FILE* f = file_;
  file_ = nullptr;
  if (std::fclose(f) != 0 || encoder_->error) {
    const int err = encoder_->error ? encoder_->error : errno ? errno : EIO;
    throw SystemError("writing compressed output", err);
  }
  if (!encoder_->put(nullptr, 0, true)) throw SystemError("writing compressed output", encoder_->error ? encoder_->error : EIO);
}

}  // namespace dpscope::model
