$offlisting
$offdigit

EQUATIONS
	budget_0__hi
	quad_0__hi
	quad_1__hi
	objective;

POSITIVE VARIABLES
	alpha_1_
	alpha_2_
	alpha_3_
	alpha_4_
	alpha_5_
	alpha_6_
	alpha_7_
	alpha_8_
	alpha_9_
	alpha_10_;

VARIABLES
	GAMS_OBJECTIVE
	theta;


budget_0__hi.. alpha_1_ + alpha_2_ + alpha_3_ + alpha_4_ + alpha_5_ + alpha_6_ + alpha_7_ + alpha_8_ + alpha_9_ + alpha_10_ =l= 6 ;
quad_0__hi.. (2.6363238887721554*alpha_1_*alpha_1_ + 1.285715698687251*alpha_2_*alpha_2_ + 2.6726477256113519*alpha_1_*alpha_2_ + 0.22974454787239526*alpha_3_*alpha_3_ + (-1.1576449840628085)*alpha_1_*alpha_3_ + (-0.7873198385231481)*alpha_2_*alpha_3_ + 0.027366328645156097*alpha_4_*alpha_4_ + 0.041145447288913645*alpha_1_*alpha_4_ + 0.08815386545781867*alpha_2_*alpha_4_ + 0.073322093591844009*alpha_3_*alpha_4_ + 1.1811486234150121*alpha_5_*alpha_5_ + 1.4905707064939779*alpha_1_*alpha_5_ + (-0.22677659335694916)*alpha_2_*alpha_5_ + (-0.6100422593587272)*alpha_3_*alpha_5_ + (-0.28391080979074684)*alpha_4_*alpha_5_ + 0.28567072085778589*alpha_6_*alpha_6_ + (-0.74519738036149508)*alpha_1_*alpha_6_ + 0.14292950301977014*alpha_2_*alpha_6_ + (-0.12688902800079513)*alpha_3_*alpha_6_ + (-0.08804923345994757)*alpha_4_*alpha_6_ + (-0.10267916456868915)*alpha_5_*alpha_6_ + 0.080417852345212829*alpha_7_*alpha_7_ + 0.6067200142366352*alpha_1_*alpha_7_ + (-0.0014210709635293917)*alpha_2_*alpha_7_ + (-0.035764525044616975)*alpha_3_*alpha_7_ + 0.012882507003224318*alpha_4_*alpha_7_ + 0.30087396349229734*alpha_5_*alpha_7_ + (-0.27324432406802746)*alpha_6_*alpha_7_ + 0.507730922998683*alpha_8_*alpha_8_ + 0.31472705811235957*alpha_1_*alpha_8_ + (-0.028368005312649255)*alpha_2_*alpha_8_ + 0.3701572608880218*alpha_3_*alpha_8_ + 0.21353479538324749*alpha_4_*alpha_8_ + (-0.81321018355393737)*alpha_5_*alpha_8_ + (-0.61001520004133469)*alpha_6_*alpha_8_ + 0.19419597482320813*alpha_7_*alpha_8_ + 0.2458405231868774*alpha_9_*alpha_9_ + (-0.39564422836498359)*alpha_1_*alpha_9_ + 0.32176840307093507*alpha_2_*alpha_9_ + (-0.20160381801467464)*alpha_3_*alpha_9_ + (-0.08397989265144037)*alpha_4_*alpha_9_ + (-0.011145115639649233)*alpha_5_*alpha_9_ + 0.51990779345404869*alpha_6_*alpha_9_ + (-0.23281915073189902)*alpha_7_*alpha_9_ + (-0.5839437859424573)*alpha_8_*alpha_9_ + 0.8660291339473067*alpha_10_*alpha_10_ + 1.5762230388063068*alpha_1_*alpha_10_ + 1.54938113841703*alpha_2_*alpha_10_ + (-0.098962925971412388)*alpha_3_*alpha_10_ + 0.25493269477834424*alpha_4_*alpha_10_ + (-1.1173386720866028)*alpha_5_*alpha_10_ + (-0.34220632251409133)*alpha_6_*alpha_10_ + 0.09095626748215657*alpha_7_*alpha_10_ + 0.85695784017182408*alpha_8_*alpha_10_ + (-0.23172936488454399)*alpha_9_*alpha_10_) - theta =l= 0 ;
quad_1__hi.. (5.4444444444444455*alpha_1_*alpha_1_ + 0.75*alpha_2_*alpha_2_ + 2.3333333333333335*alpha_1_*alpha_2_ + 0.75*alpha_3_*alpha_3_ + 3.8888888888888893*alpha_1_*alpha_3_ + 0.49999999999999994*alpha_2_*alpha_3_ + 0.33333333333333337*alpha_4_*alpha_4_ + (-1.5555555555555556)*alpha_1_*alpha_4_ + (-0.99999999999999989)*alpha_2_*alpha_4_ + (-0.33333333333333326)*alpha_3_*alpha_4_ + 1.6944444444444446*alpha_5_*alpha_5_ + 3.5*alpha_1_*alpha_5_ + 2.25*alpha_2_*alpha_5_ + 0.75*alpha_3_*alpha_5_ + (-1.5)*alpha_4_*alpha_5_ + 0.19444444444444445*alpha_6_*alpha_6_ + 1.1666666666666667*alpha_1_*alpha_6_ + 0.75*alpha_2_*alpha_6_ + 0.25*alpha_3_*alpha_6_ + (-0.5)*alpha_4_*alpha_6_ + 1.1111111111111112*alpha_5_*alpha_6_ + 0.083333333333333329*alpha_7_*alpha_7_ + 0.3888888888888889*alpha_1_*alpha_7_ + 0.25*alpha_2_*alpha_7_ + 0.08333333333333334*alpha_3_*alpha_7_ + (-0.16666666666666666)*alpha_4_*alpha_7_ + 0.41666666666666669*alpha_5_*alpha_7_ + 0.083333333333333329*alpha_6_*alpha_7_ + 0.77777777777777779*alpha_8_*alpha_8_ + 3.8888888888888893*alpha_1_*alpha_8_ + 0.5*alpha_2_*alpha_8_ + 1.5*alpha_3_*alpha_8_ + (-0.3333333333333333)*alpha_4_*alpha_8_ + 0.7222222222222222*alpha_5_*alpha_8_ + 0.27777777777777779*alpha_6_*alpha_8_ + 0.027777777777777776*alpha_9_*alpha_9_ + (-0.02777777777777779)*alpha_5_*alpha_9_ + 0.027777777777777776*alpha_6_*alpha_9_ + (-0.083333333333333329)*alpha_7_*alpha_9_ + 0.05555555555555555*alpha_8_*alpha_9_ + 0.19444444444444445*alpha_10_*alpha_10_ + 0.77777777777777779*alpha_1_*alpha_10_ + 0.49999999999999994*alpha_2_*alpha_10_ + 0.16666666666666669*alpha_3_*alpha_10_ + (-0.33333333333333326)*alpha_4_*alpha_10_ + 0.6944444444444444*alpha_5_*alpha_10_ + 0.3055555555555555*alpha_6_*alpha_10_ + (-0.083333333333333329)*alpha_7_*alpha_10_ + 0.27777777777777779*alpha_8_*alpha_10_ + 0.1111111111111111*alpha_9_*alpha_10_) - theta =l= 0 ;
objective.. GAMS_OBJECTIVE =e= (4*alpha_1_ + 2.1666666666666665*alpha_2_ + 2*alpha_3_ + 0.5*alpha_4_ + 2*alpha_5_ + 1.5*alpha_6_ + 1.3333333333333333*alpha_7_ + 2.1666666666666665*alpha_8_ + 1.1666666666666667*alpha_9_ + 1.5*alpha_10_) - theta ;

alpha_1_.l = 0;
alpha_2_.l = 0.06707065076622126;
alpha_3_.l = 0;
alpha_4_.l = 0.13457866023360196;
alpha_5_.l = 0;
alpha_6_.l = 0;
alpha_7_.l = 2.4554322860943807;
alpha_8_.l = 0.5000002003915592;
alpha_9_.l = 2.5026887781619909;
alpha_10_.l = 0.34022972327481737;
theta.l = 0.4999999411830484;

MODEL GAMS_MODEL /all/ ;
option solprint=off;
option limrow=0;
option limcol=0;
option solvelink=5;
SOLVE GAMS_MODEL USING nlp maximizing GAMS_OBJECTIVE;

Scalars MODELSTAT 'model status', SOLVESTAT 'solve status';
MODELSTAT = GAMS_MODEL.modelstat;
SOLVESTAT = GAMS_MODEL.solvestat;

Scalar OBJEST 'best objective', OBJVAL 'objective value';
OBJEST = GAMS_MODEL.objest;
OBJVAL = GAMS_MODEL.objval;

Scalar NUMVAR 'number of variables';
NUMVAR = GAMS_MODEL.numvar

Scalar NUMEQU 'number of equations';
NUMEQU = GAMS_MODEL.numequ

Scalar NUMDVAR 'number of discrete variables';
NUMDVAR = GAMS_MODEL.numdvar

Scalar NUMNZ 'number of nonzeros';
NUMNZ = GAMS_MODEL.numnz

Scalar ETSOLVE 'time to execute solve statement';
ETSOLVE = GAMS_MODEL.etsolve

