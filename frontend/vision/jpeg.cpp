// JPEG through libjpeg-turbo's libjpeg API, from and to memory. libjpeg reports an error by
// calling error_exit, which must not return; an exception cannot cross its C frames, so it
// longjmps back to the call that set the jump, which destroys the libjpeg object and throws.
// Every object with a destructor in those functions lives from before setjmp, so the jump
// skips none.
#include <fmt/format.h>

#include <csetjmp>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>
// jpeglib.h needs size_t and FILE declared before it.
#include <cstdio>
#include <jpeglib.h>
// jerror.h after jpeglib.h: the message codes.
#include <jerror.h>

#include "frontend/io/atomic_file.h"
#include "lt/vision.h"

namespace lt::vision {
namespace {

struct ErrorManager {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void jump_back(j_common_ptr cinfo) {
  auto* e = reinterpret_cast<ErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, e->message);
  std::longjmp(e->jump, 1);
}

/// Warnings stay silent (extraneous bytes, as PIL ignores them), but a file that ends inside its
/// data, which libjpeg would finish in grey, is an error, as PIL's "image file is truncated".
void on_message(j_common_ptr cinfo, int level) {
  if (level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF) jump_back(cinfo);
}

void install(ErrorManager& e) {
  jpeg_std_error(&e.mgr);
  e.mgr.error_exit = jump_back;
  e.mgr.emit_message = on_message;
  e.message[0] = 0;
}

}  // namespace

Image decode_jpeg(std::span<const uint8_t> bytes, const std::string& what) {
  if (bytes.size() < 4 || bytes[0] != 0xFF || bytes[1] != 0xD8)
    throw InputError(fmt::format("{}: not a JPEG file (no start-of-image marker)", what));
  Image img;
  std::vector<uint8_t> row;
  jpeg_decompress_struct info{};
  ErrorManager err;
  install(err);
  info.err = &err.mgr;
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&info);
    throw InputError(fmt::format("{}: cannot decode the JPEG: {}", what, err.message));
  }
  jpeg_create_decompress(&info);
  jpeg_mem_src(&info, bytes.data(), static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&info, TRUE);
  // libjpeg converts grayscale and YCbCr to RGB; CMYK (Adobe's, inverted) is converted below.
  const bool cmyk = info.jpeg_color_space == JCS_CMYK || info.jpeg_color_space == JCS_YCCK;
  info.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
  jpeg_start_decompress(&info);
  img.height = info.output_height;
  img.width = info.output_width;
  const int comps = info.output_components;
  row.resize(static_cast<size_t>(img.width * comps));
  img.rgb.resize(static_cast<size_t>(img.height * img.width * 3));
  while (info.output_scanline < info.output_height) {
    uint8_t* dst = img.rgb.data() + static_cast<size_t>(info.output_scanline) * img.width * 3;
    JSAMPROW rows[1] = {row.data()};
    jpeg_read_scanlines(&info, rows, 1);
    for (int64_t x = 0; x < img.width; ++x) {
      const uint8_t* src = row.data() + x * comps;
      for (int c = 0; c < 3; ++c)
        dst[x * 3 + c] = cmyk ? static_cast<uint8_t>(src[c] * src[3] / 255) : src[c];
    }
  }
  jpeg_finish_decompress(&info);
  jpeg_destroy_decompress(&info);
  return img;
}

Image read_jpeg(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open the file", path));
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
  return decode_jpeg(bytes, path);
}

void write_jpeg(const std::string& path, const Image& image, int quality) {
  if (image.height < 1 || image.width < 1 ||
      image.rgb.size() != static_cast<size_t>(image.height * image.width * 3))
    throw InputError(fmt::format("write_jpeg {}: an image {}x{} needs {} RGB bytes, has {}", path,
                                 image.height, image.width, image.height * image.width * 3,
                                 image.rgb.size()));
  if (quality < 1 || quality > 100)
    throw InputError(fmt::format("write_jpeg {}: quality must be in [1, 100], got {}", path,
                                 quality));
  unsigned char* out = nullptr;
  unsigned long out_size = 0;  // libjpeg's type
  jpeg_compress_struct info{};
  ErrorManager err;
  install(err);
  info.err = &err.mgr;
  if (setjmp(err.jump)) {
    jpeg_destroy_compress(&info);
    std::free(out);
    throw Error(fmt::format("write_jpeg {}: {}", path, err.message));
  }
  jpeg_create_compress(&info);
  jpeg_mem_dest(&info, &out, &out_size);
  info.image_width = static_cast<JDIMENSION>(image.width);
  info.image_height = static_cast<JDIMENSION>(image.height);
  info.input_components = 3;
  info.in_color_space = JCS_RGB;
  jpeg_set_defaults(&info);
  jpeg_set_quality(&info, quality, TRUE);
  jpeg_start_compress(&info, TRUE);
  while (info.next_scanline < info.image_height) {
    JSAMPROW rows[1] = {const_cast<uint8_t*>(image.rgb.data()) +
                        static_cast<size_t>(info.next_scanline) * image.width * 3};
    jpeg_write_scanlines(&info, rows, 1);
  }
  jpeg_finish_compress(&info);
  jpeg_destroy_compress(&info);
  // The encoded bytes are in a malloc'ed buffer of libjpeg's: the file takes them, then it goes.
  const std::vector<uint8_t> bytes(out, out + out_size);
  std::free(out);
  io::AtomicFile file(path);
  file.write(bytes.data(), bytes.size());
  file.commit();
}

}  // namespace lt::vision
