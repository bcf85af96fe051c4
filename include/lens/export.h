// Symbol visibility for the public API.
#ifndef LENS_EXPORT_H_
#define LENS_EXPORT_H_

#if defined(__GNUC__) || defined(__clang__)
#define LENS_EXPORT [[gnu::visibility("default")]]
#else
#define LENS_EXPORT
#endif

#endif  // LENS_EXPORT_H_
