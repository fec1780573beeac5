#define TILE 64
