// lens-tuner (docs/tuner.md).
#ifndef LENS_TUNER_H_
#define LENS_TUNER_H_
#endif  // LENS_TUNER_H_
