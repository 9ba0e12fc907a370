"""kerneljudge's untrusted side: runner.cpp (with platform.h and timing.h), built per track by grader.compile."""
