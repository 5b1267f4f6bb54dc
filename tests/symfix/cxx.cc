// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Symbolizer fixture: C++ functions whose symbols are mangled.
volatile int cxx_sink;

namespace symfix {
struct Widget {
	__attribute__((noinline)) int spin(int x);
};

__attribute__((noinline)) int Widget::spin(int x)
{
	for (int i = 0; i < x; i++)
		cxx_sink += i;
	return cxx_sink;
}

template <typename T> __attribute__((noinline)) T twice(T v)
{
	cxx_sink += 1;
	return v + v;
}
} // namespace symfix

int main(int argc, char **)
{
	symfix::Widget w;

	return w.spin(argc) + symfix::twice<long>(argc);
}
